/**
 * A real crash in the middle of a CSV delivery: a child process runs the built library's ledger
 * and CSV writer on the snapshot file and is killed with SIGKILL at the chosen point.
 */
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const DIST = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "dist", "src");

/**
 * `each-after-second-rename`: a folder delivery of each pending run (deliverEach), killed once the
 * second run's folder is renamed into place and before the ledger records it.
 */
export async function crashAfterWrite(dbPath: string, outDir: string, forRun: number, when: "before-write" | "after-rename" | "each-after-second-rename"): Promise<void> {
  const head = `
    const { openDatabase } = await import(${JSON.stringify(join(DIST, "store", "file", "database.js"))});
    const { deliver, deliverEach } = await import(${JSON.stringify(join(DIST, "sinks", "ledger.js"))});
    const { csvOutput } = await import(${JSON.stringify(join(DIST, "sinks", "csv", "deliver-csv.js"))});
    const { csvFormat } = await import(${JSON.stringify(join(DIST, "sinks", "csv", "csv-format.js"))});
    const { writeFolder } = await import(${JSON.stringify(join(DIST, "sinks", "files", "folder-sink.js"))});
    const db = openDatabase(${JSON.stringify(dbPath)});
  `;
  const body = when === "each-after-second-rename" ? `
    let n = 0;
    await deliverEach(db, csvOutput(${JSON.stringify(outDir)}), ${forRun}, (runs) => {
      const folder = writeFolder(db, ${JSON.stringify(outDir)}, csvFormat, { folderRun: runs[0], runs });
      if (++n < 2) return folder;
      process.kill(process.pid, "SIGKILL");
      return new Promise(() => {});
    });
  ` : `
    await deliver(db, csvOutput(${JSON.stringify(outDir)}), ${forRun}, (runs) => {
      if (${JSON.stringify(when)} === "after-rename") writeFolder(db, ${JSON.stringify(outDir)}, csvFormat, { folderRun: ${forRun}, runs });
      process.kill(process.pid, "SIGKILL");
      return new Promise(() => {});
    });
  `;
  const script = head + body;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.once("close", (_code, sig) => resolve(sig)));
  if (signal !== "SIGKILL") throw new Error(`the child did not crash as planned: ${stderr}`);
}
