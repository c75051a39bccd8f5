import { startCli, type CliRun } from "./cli-process.js";
import { waitUntil } from "./wait.js";

/**
 * Start the built CLI's `webhooks serve --port 0` and wait for its listening line; the run is
 * pushed to `started` so that the test's afterAll can stop it if a failure leaves it running.
 *
 * @example const { run, url } = await serveWebhooks(env, dir, started);
 */
export async function serveWebhooks(env: Record<string, string>, cwd: string, started: CliRun[], deadlineMs?: number): Promise<{ run: CliRun; url: string }> {
  const run = startCli(["webhooks", "serve", "--port", "0"], env, cwd);
  started.push(run);
  let out = "";
  run.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  const url = await waitUntil("the listening line", () => {
    if (run.child.exitCode !== null) throw new Error(`webhooks serve exited ${run.child.exitCode} before listening`);
    const line = out.split("\n").find((l) => l.includes('"webhooks.listening"'));
    return line ? (JSON.parse(line) as { url: string }).url : undefined;
  }, deadlineMs);
  return { run, url };
}

/** Kill (SIGKILL) every receiver a failed test left running and wait for all of them to end. */
export async function stopAll(started: readonly CliRun[]): Promise<void> {
  for (const r of started) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGKILL");
  await Promise.all(started.map((r) => r.done));
}
