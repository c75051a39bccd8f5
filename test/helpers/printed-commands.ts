/**
 * Running documented command lines as printed: each through `sh -c`, with `benefits-sync` on the
 * PATH as an install puts it. A page's lines name a fixed port (`--port 4010`, `127.0.0.1:4010`)
 * that the README's own sandbox, or another suite on this machine, may hold: a test runs them with
 * that port swapped for a free one ({@link startOnFreePort}), and says so in its name and in what
 * it prints on a failure ({@link PortSwap.says}).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI } from "./cli-process.js";
import { closedPort } from "./ports.js";
import { EVENT_DEADLINE_MS, waitUntil } from "./wait.js";

/** An environment whose PATH has a `benefits-sync` (in `dir`/bin) that runs the built CLI. */
export function installedEnv(dir: string): Record<string, string> {
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "benefits-sync"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(join(bin, "benefits-sync"), 0o755);
  return { PATH: `${bin}:${process.env.PATH ?? ""}` };
}

export interface PrintedServer {
  /** What it printed before it said it was ready. */
  readonly banner: string;
  /** SIGTERM, and wait for it to exit (its exit code, or null when a signal ended it). */
  stop(): Promise<number | null>;
}

export interface PrintedOptions {
  /**
   * Start the line in a process group of its own, and stop the whole group: for a line whose
   * server is a grandchild (`npx s3rver` runs `sh -c s3rver`, which does not pass SIGTERM on).
   */
  readonly group?: boolean;
}

/** A start refused because the port is taken (EADDRINUSE): another port may be tried. */
export class PortTakenError extends Error {}

/**
 * Start a long-running printed line and wait for it to say it is ready (`ready` in its output:
 * the sandbox's "Press Ctrl+C" by default). Fails at once when it exits first (a
 * {@link PortTakenError} when its port was taken), or after the event deadline.
 *
 * @example const sb = await startPrinted("benefits-sync sandbox --port 40123", dir, env); ...; await sb.stop();
 */
export async function startPrinted(line: string, cwd: string, env: Record<string, string>, ready = "Press Ctrl+C", opts: PrintedOptions = {}): Promise<PrintedServer> {
  const child: ChildProcess = spawn("sh", ["-c", `exec ${line}`], { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: opts.group === true });
  // A group's SIGTERM reaches every process of the line, as Ctrl+C in a terminal does.
  const stop = (): void => void (opts.group ? process.kill(-child.pid!, "SIGTERM") : child.kill("SIGTERM"));
  const out = { banner: "", errors: "", gone: false, code: null as number | null };
  child.stdout!.on("data", (d: Buffer) => (out.banner += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out.errors += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  void exited.then((code) => Object.assign(out, { gone: true, code }));
  try {
    await waitUntil(`\`${line}\` to print "${ready}"`, () => {
      if (out.gone) {
        const why = `${line} exited ${out.code} before it was ready: ${out.errors}`;
        throw /EADDRINUSE/.test(out.errors) ? new PortTakenError(why) : new Error(why);
      }
      return out.banner.includes(ready);
    });
  } catch (e) {
    stop();
    await exited;
    throw e;
  }
  return {
    banner: out.banner,
    stop: async () => {
      if (!out.gone) stop();
      return exited;
    },
  };
}

/** A block of printed lines with its fixed port swapped for a free one. */
export interface PortSwap {
  /** The block's lines, as run. */
  readonly lines: string[];
  /** The free port they run on. */
  readonly port: number;
  /** What a failure message says of it: "printed with port 4010, run on free port 40123". */
  readonly says: string;
}

/**
 * The block's lines with `printed` swapped for `port` wherever a line names it as a port: after
 * `--port` and in a loopback URL (`http://127.0.0.1:4010`, `localhost:4010`). A block that names
 * the port nowhere, or anywhere else, is an error: its test would no longer run what it claims to.
 *
 * @example swapPort(["benefits-sync sandbox --port 4010"], 4010, 40123) // ["benefits-sync sandbox --port 40123"]
 */
export function swapPort(lines: readonly string[], printed: number, port: number): PortSwap {
  const swapped = lines.map((l) => l.replace(new RegExp(`(--port[ =]|//(?:127\\.0\\.0\\.1|localhost):)${printed}\\b`, "g"), `$1${port}`));
  if (swapped.every((l, i) => l === lines[i])) throw new Error(`the printed block names no port ${printed} (after --port or in a loopback URL): ${lines.join(" | ")}`);
  const left = swapped.find((l) => new RegExp(`\\b${printed}\\b`).test(l));
  if (left !== undefined) throw new Error(`the printed line names ${printed} where it is not swapped for a free port: ${left}`);
  return { lines: swapped, port, says: `printed with port ${printed}, run on free port ${port}` };
}

/**
 * Start the block's first line (a server printed on a fixed port) on a free port instead, with
 * the rest of the block swapped to match; a port taken in the moment between its choice and the
 * start is replaced by another, a few times at most.
 *
 * @example const { server, lines, says } = await startOnFreePort(block, 4010, dir, env);
 */
export async function startOnFreePort(block: readonly string[], printed: number, cwd: string, env: Record<string, string>, ready?: string, opts?: PrintedOptions): Promise<PortSwap & { server: PrintedServer }> {
  for (let attempt = 1; ; attempt++) {
    const swap = swapPort(block, printed, await closedPort());
    try {
      return { ...swap, server: await startPrinted(swap.lines[0]!, cwd, env, ready, opts) };
    } catch (e) {
      if (!(e instanceof PortTakenError) || attempt >= 3) throw new Error(`${swap.says}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
  }
}

/**
 * Run one printed line to its end: a line still going after the event deadline is killed, and its
 * stderr says so (a hung command fails its test instead of blocking the worker, whose timers a
 * synchronous wait stops).
 */
export function runPrinted(line: string, cwd: string, env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync("sh", ["-c", line], { cwd, env, encoding: "utf8", timeout: EVENT_DEADLINE_MS, killSignal: "SIGKILL" });
  const hung = r.error && (r.error as NodeJS.ErrnoException).code === "ETIMEDOUT" ? `\n(killed: still running after ${EVENT_DEADLINE_MS} ms)` : "";
  return { status: r.status, stdout: r.stdout, stderr: `${r.stderr}${hung}` };
}
