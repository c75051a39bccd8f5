/**
 * `benefits-sync --help | head -3`: the reader leaves before the CLI has written everything. The
 * built CLI must end quietly then (no stack trace, exit 0), as a Unix filter does.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI } from "../helpers/cli-process.js";

/** Run the CLI with a stdout whose reader is gone before the CLI writes (the pipe's read end closed at once). */
function runWithReaderGone(args: readonly string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const cwd = mkdtempSync(join(tmpdir(), "bs-pipe-"));
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH ?? "" }, cwd });
  child.stdout.destroy();
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) =>
    child.once("close", (code, signal) => {
      rmSync(cwd, { recursive: true, force: true });
      resolve({ code, signal, stderr });
    }),
  );
}

describe("a piped CLI whose reader goes away", () => {
  it("--help into a closed pipe exits 0 with nothing on stderr (no EPIPE stack trace)", async () => {
    const r = await runWithReaderGone(["--help"]);
    expect(r.stderr).toBe("");
    expect(r).toMatchObject({ code: 0, signal: null });
  });

  it("a command's output into a closed pipe: `jobs` exits 0, quietly", async () => {
    const r = await runWithReaderGone(["jobs"]);
    expect(r.stderr).toBe("");
    expect(r).toMatchObject({ code: 0, signal: null });
  });
});
