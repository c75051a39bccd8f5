/**
 * A sandbox in its own process, for benchmarks: `node dist/src/sandbox/serve.js --members 100000`.
 * Prints one JSON line `{"baseUrl":...,"keys":{...}}` when listening; serves until SIGINT/SIGTERM.
 */
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { startSandbox } from "./sandbox.js";
import { toSandboxOptions, untilStopped } from "./run-options.js";

/** Parse argv, serve, print the JSON line; resolves to the exit status when stopped. */
export async function main(argv: string[] = process.argv.slice(2), io: { out?: (line: string) => void; signal?: AbortSignal } = {}): Promise<number> {
  const out = io.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      seed: { type: "string" },
      members: { type: "string" },
      groups: { type: "string" },
      "claims-per-member": { type: "string" },
      "latency-ms": { type: "string" },
      today: { type: "string" },
      "webhook-delay-ms": { type: "string" },
      "answer-shapes": { type: "string" },
    },
    strict: true,
  });
  const sb = await startSandbox(
    toSandboxOptions({
      port: values.port,
      host: values.host,
      seed: values.seed,
      members: values.members,
      groups: values.groups,
      claimsPerMember: values["claims-per-member"],
      latencyMs: values["latency-ms"],
      today: values.today,
      webhookDelayMs: values["webhook-delay-ms"],
      answerShapes: values["answer-shapes"],
    }),
  );
  out(JSON.stringify({ baseUrl: sb.baseUrl, keys: sb.keys, today: sb.today }));
  await untilStopped(io.signal);
  await sb.close();
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = 2;
    },
  );
}
