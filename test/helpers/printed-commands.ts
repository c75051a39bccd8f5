/**
 * Running documented command lines exactly as printed: each through `sh -c`, with `benefits-sync`
 * on the PATH as an install puts it. A page's sandbox line names a fixed port, and another suite
 * on this machine may hold it for a while, so a start refused with EADDRINUSE is tried again until
 * this test's own sandbox is up (its banner is what says so).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI } from "./cli-process.js";
import { waitUntil } from "./wait.js";

/** An environment whose PATH has a `benefits-sync` (in `dir`/bin) that runs the built CLI. */
export function installedEnv(dir: string): Record<string, string> {
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "benefits-sync"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(join(bin, "benefits-sync"), 0o755);
  return { PATH: `${bin}:${process.env.PATH ?? ""}` };
}

export interface PrintedServer {
  /** What it printed before "Press Ctrl+C". */
  readonly banner: string;
  /** SIGTERM, and wait for it to exit. */
  stop(): Promise<void>;
}

/**
 * Start a long-running printed line (`benefits-sync sandbox --port 4010`) and wait for its banner.
 *
 * @example const sb = await startPrinted("benefits-sync sandbox --port 4010", dir, env); ...; await sb.stop();
 */
export async function startPrinted(line: string, cwd: string, env: Record<string, string>): Promise<PrintedServer> {
  const start = () => {
    const child: ChildProcess = spawn("sh", ["-c", `exec ${line}`], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    const out = { banner: "", errors: "", gone: false };
    child.stdout!.on("data", (d: Buffer) => (out.banner += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (out.errors += d.toString()));
    const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
    void exited.then(() => (out.gone = true));
    return { child, out, exited };
  };
  let run = start();
  try {
    await waitUntil(`the banner of ${line}`, async () => {
      if (run.out.gone) {
        if (!/EADDRINUSE/.test(run.out.errors)) throw new Error(`${line} exited: ${run.out.errors}`);
        await new Promise((r) => setTimeout(r, 250));
        run = start();
        return false;
      }
      return run.out.banner.includes("Press Ctrl+C");
    });
  } catch (e) {
    run.child.kill("SIGTERM");
    await run.exited;
    throw e;
  }
  const { child, out, exited } = run;
  return {
    banner: out.banner,
    stop: async () => {
      if (!out.gone) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Run one printed line to its end. */
export function runPrinted(line: string, cwd: string, env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync("sh", ["-c", line], { cwd, env, encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
