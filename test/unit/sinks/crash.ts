/**
 * A real crash in the middle of a CSV delivery: a child process runs the built library's ledger
 * and CSV writer on the snapshot file and is killed with SIGKILL at the chosen point.
 */
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const DIST = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "dist", "src");

export async function crashAfterWrite(dbPath: string, outDir: string, forRun: number, when: "before-write" | "after-rename"): Promise<void> {
  const script = `
    const { openDatabase } = await import(${JSON.stringify(join(DIST, "store", "database.js"))});
    const { deliver } = await import(${JSON.stringify(join(DIST, "sinks", "ledger.js"))});
    const { csvOutput } = await import(${JSON.stringify(join(DIST, "sinks", "csv", "deliver-csv.js"))});
    const { csvFormat } = await import(${JSON.stringify(join(DIST, "sinks", "csv", "csv-format.js"))});
    const { writeFolder } = await import(${JSON.stringify(join(DIST, "sinks", "files", "folder-sink.js"))});
    const db = openDatabase(${JSON.stringify(dbPath)});
    await deliver(db, csvOutput(${JSON.stringify(outDir)}), ${forRun}, (runs) => {
      if (${JSON.stringify(when)} === "after-rename") writeFolder(db, ${JSON.stringify(outDir)}, csvFormat, { folderRun: ${forRun}, runs });
      process.kill(process.pid, "SIGKILL");
      return new Promise(() => {});
    });
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.once("close", (_code, sig) => resolve(sig)));
  if (signal !== "SIGKILL") throw new Error(`the child did not crash as planned: ${stderr}`);
}
