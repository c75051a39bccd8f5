/** Another program holding an inbox's write lock: the sqlite3 shell with `BEGIN IMMEDIATE` open. */
import { spawn } from "node:child_process";
import { waitUntil } from "./wait.js";

/**
 * Resolves once `sqlite3 PATH` holds the write lock; `release` rolls back and waits for it to exit.
 *
 * @example const lock = await holdWriteLock(inboxPath); ...; await lock.release();
 */
export async function holdWriteLock(path: string): Promise<{ release(): Promise<void> }> {
  const shell = spawn("sqlite3", [path], { stdio: ["pipe", "pipe", "pipe"] });
  let said = "";
  shell.stdout.on("data", (d: Buffer) => (said += d.toString()));
  const gone = new Promise<void>((resolve) => shell.once("close", () => resolve()));
  shell.stdin.write("BEGIN IMMEDIATE;\nSELECT 'locked';\n");
  const release = async () => {
    shell.stdin.end("ROLLBACK;\n");
    await gone;
  };
  try {
    await waitUntil(`sqlite3 to hold the write lock of ${path}`, () => said.includes("locked") || (shell.exitCode !== null ? Promise.reject(new Error(`sqlite3 exited ${shell.exitCode}`)) : undefined), 30_000);
  } catch (e) {
    await release();
    throw e;
  }
  return { release };
}
