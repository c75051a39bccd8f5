/**
 * Command-line options of `benefits-sync sandbox` and `serve.js`, checked once at the edge. A sandbox
 * started from the command line stands in for the service, so its "today" is the real date unless
 * `--today` fixes it (tests, the demo and the benchmarks fix it, for reproducible runs).
 */
import { parseAnswerShapes } from "./answer-shapes.js";
import { isValidIsoDay } from "./dates.js";
import type { SandboxOptions } from "./sandbox.js";

/**
 * Bad sandbox options, each problem on its own line. The sandbox's own error (it shares no module
 * with the product): the CLI turns it into its usage error (exit 2).
 */
export class SandboxOptionsError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid sandbox options:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "SandboxOptionsError";
  }
}

/** What the CLI table passes in (commander gives strings; library callers may pass numbers). */
export interface SandboxCommandOptions {
  port?: number | string | undefined;
  host?: string | undefined;
  seed?: number | string | undefined;
  members?: number | string | undefined;
  groups?: number | string | undefined;
  claimsPerMember?: number | string | undefined;
  latencyMs?: number | string | undefined;
  today?: string | undefined;
  webhookDelayMs?: number | string | undefined;
  /** `write=shape,...`: how writes answer (answer-shapes.ts), e.g. `terminate=empty,enrollmentStatus=upper`. */
  answerShapes?: string | undefined;
}

function num(problems: string[], name: string, v: number | string | undefined, min: number, max: number, integer = true): number | undefined {
  if (v === undefined || v === "") return undefined;
  const n = typeof v === "number" ? v : Number(v);
  if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    problems.push(`--${name}: expected ${integer ? "an integer" : "a number"} from ${min} to ${max}, got ${JSON.stringify(v)}`);
    return undefined;
  }
  return n;
}

/** The real date, UTC, as the service sees it. */
export function realToday(now: Date = new Date()): string {
  return now.toISOString().slice(0, 10);
}

/** Turn command options into SandboxOptions; every bad value is reported in one SandboxOptionsError. */
export function toSandboxOptions(o: SandboxCommandOptions): SandboxOptions {
  const problems: string[] = [];
  const out: SandboxOptions = {};
  const port = num(problems, "port", o.port, 0, 65535);
  if (port !== undefined) out.port = port;
  if (o.host) out.host = o.host;
  if (o.seed !== undefined && o.seed !== "") out.seed = typeof o.seed === "string" && /^\d+$/.test(o.seed) ? Number(o.seed) : o.seed;
  const members = num(problems, "members", o.members, 1, 10_000_000);
  if (members !== undefined) out.members = members;
  const groups = num(problems, "groups", o.groups, 2, 100_000);
  if (groups !== undefined) out.groups = groups;
  const cpm = num(problems, "claims-per-member", o.claimsPerMember, 0, 100, false);
  if (cpm !== undefined) out.claimsPerMember = cpm;
  const latency = num(problems, "latency-ms", o.latencyMs, 0, 600_000);
  if (latency !== undefined && latency > 0) out.faults = { latencyMs: latency };
  const wd = num(problems, "webhook-delay-ms", o.webhookDelayMs, 0, 3_600_000);
  if (wd !== undefined) out.webhookDelayMs = wd;
  if (o.today === undefined) out.today = realToday();
  else if (isValidIsoDay(o.today)) out.today = o.today;
  else problems.push(`--today: expected a date YYYY-MM-DD, got ${JSON.stringify(o.today)}`);
  if (o.answerShapes) out.answerShapes = parseAnswerShapes(o.answerShapes, problems);
  if (problems.length) throw new SandboxOptionsError(problems);
  return out;
}

/** Resolve when SIGINT or SIGTERM arrives, or `signal` aborts. */
export function untilStopped(signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      process.off("SIGINT", done);
      process.off("SIGTERM", done);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    process.on("SIGINT", done);
    process.on("SIGTERM", done);
    if (signal?.aborted) done();
    else signal?.addEventListener("abort", done);
  });
}
