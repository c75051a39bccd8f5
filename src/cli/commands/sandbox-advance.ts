/**
 * `benefits-sync sandbox advance`: make simulated days pass in a sandbox running in another process,
 * through its control endpoint, so a user can watch the changes of a day arrive in the next sync
 * without writing an HTTP call.
 */
import { request } from "undici";
import { DETAILS, errorCode } from "../../api/transport-errors.js";
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";

interface DayAnswer {
  day: string;
  changes: Record<string, { inserted: string[]; updated: string[]; deleted: string[] }>;
}

function changeCount(a: DayAnswer): number {
  let n = 0;
  for (const r of Object.values(a.changes)) n += r.inserted.length + r.updated.length + r.deleted.length;
  return n;
}

/** The control endpoint under --url, or the usage problem to print. */
function controlUrl(raw: unknown): URL | string {
  if (typeof raw !== "string" || raw === "") return "--url is required: the sandbox's base URL, printed in its banner (`benefits-sync sandbox`)";
  try {
    return new URL("/_sandbox/advance", raw);
  } catch {
    return `--url ${JSON.stringify(raw)} is not a URL: give the base URL the sandbox printed, e.g. http://127.0.0.1:4010`;
  }
}

/** One simulated day; an Error whose message says what is wrong and what to do. */
async function advanceOnce(url: URL): Promise<DayAnswer> {
  let res;
  try {
    res = await request(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  } catch (err) {
    const code = errorCode(err);
    const why = (code && DETAILS[code]) ?? code ?? "no answer";
    throw new Error(`cannot reach the sandbox at ${url.host} (${why}): is \`benefits-sync sandbox\` running there?`);
  }
  const text = await res.body.text();
  if (res.statusCode !== 200) {
    throw new Error(`POST ${url.href} answered ${res.statusCode}: that URL is not a benefits-sync sandbox (the service itself has no simulated days)`);
  }
  return JSON.parse(text) as DayAnswer;
}

export async function run(ctx: CommandContext): Promise<number> {
  const url = controlUrl(ctx.options.url);
  if (typeof url === "string") {
    ctx.stderr.write(`benefits-sync sandbox advance: ${url}\n`);
    return ExitCode.USAGE;
  }
  const days = typeof ctx.options.days === "number" ? ctx.options.days : 1;
  let last: DayAnswer | undefined;
  for (let i = 0; i < days; i++) {
    try {
      last = await advanceOnce(url);
    } catch (err) {
      ctx.stderr.write(`benefits-sync sandbox advance: ${(err as Error).message}\n`);
      return ExitCode.RUN_FAILED;
    }
    if (!ctx.globals.quiet) ctx.stdout.write(`${last.day}: ${changeCount(last)} changes\n`);
  }
  if (last && !ctx.globals.quiet) ctx.stdout.write(`The sandbox's today is now ${last.day}.\n`);
  return ExitCode.OK;
}
