/**
 * Deliver to a sink of your own: each run's changes as one JSON-lines file in a folder
 * (`run-00000007.jsonl`), through the snapshot's delivery ledger, as `sync --out` delivers to a
 * folder or a warehouse. What the ledger gives the sink, and what the sink promises back:
 *
 * - Every run is delivered once: a run the ledger records as delivered to this `output` is never
 *   offered again; running this twice delivers "nothing" the second time.
 * - A failed delivery (here: the folder cannot be written) is recorded failed, its runs stay
 *   pending, and the next delivery carries them. Nothing half-written is left (`close`).
 * - `arrived`: a process that died between the sink's commit and the ledger's asks, next time,
 *   whether that delivery reached the output; `true` records it delivered, `false` sends it again.
 *
 * The conformance checks every sink of ours passes are packaged as `benefits-sync/testing`, to run
 * against a sink like this one in your own test runner.
 *
 *   BENEFITS_DB=snapshot.db node my-sink.js /data/benefits-jsonl
 *
 * Exits 0 delivered or nothing to deliver, 1 the delivery failed (retried by the next), 2 usage.
 */
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";
import { deliverToSink, openDatabase, type DeliveryPlan, type Sink, type SinkSession } from "benefits-sync";

/** A folder of JSON-lines files, one per run; the delivery's value is the file written. */
function jsonLinesSink(folder: string): Sink<string> {
  const dir = resolve(folder);
  const fileOf = (run: number) => join(dir, `run-${String(run).padStart(8, "0")}.jsonl`);
  return {
    // The output's name in the ledger: another name is another output, which receives every run.
    output: `jsonl:${dir}`,
    describe: dir,
    // Each run its own delivery, oldest first (without it, one delivery carries every pending run).
    perRun: true,
    arrived: (interrupted) => existsSync(fileOf(interrupted.forRun)),
    open(plan: DeliveryPlan): SinkSession<string> {
      const final = fileOf(plan.folderRun);
      const partial = `${final}.partial`;
      // Throws when the folder cannot be written: the delivery fails, its runs stay pending.
      const fd = openSync(partial, "w", 0o600);
      let open = true;
      return {
        write(resource, deltas) {
          // Streamed: a first delivery of a large snapshot is never held in memory whole.
          for (const d of deltas()) {
            writeSync(fd, `${JSON.stringify({ run: d.runId, resource, op: d.op, id: d.id, changedFields: d.changedFields, data: d.data })}\n`);
          }
        },
        commit() {
          fsyncSync(fd);
          closeSync(fd);
          open = false;
          // The file appears whole or not at all.
          renameSync(partial, final);
          return final;
        },
        close() {
          if (open) closeSync(fd);
          rmSync(partial, { force: true });
        },
      };
    },
  };
}

const folder = process.argv[2];
if (folder === undefined) {
  console.error("usage: node my-sink.js FOLDER   (the folder the JSON-lines files go to; it must exist)");
  process.exit(2);
}
// Writable: the ledger lives in the snapshot.
const db = openDatabase(process.env.BENEFITS_DB ?? "benefits-sync.db");
try {
  const last = db.prepare("SELECT max(run_id) FROM runs WHERE status <> 'running'").pluck().get() as number | null;
  // Never throws for a failed delivery: the outcome says what happened.
  const outcome = await deliverToSink(db, jsonLinesSink(folder), last ?? 0);
  if (outcome.status === "failed") {
    console.error(`delivery failed, runs ${outcome.runs.join(", ")} stay pending: ${outcome.error?.message ?? "unknown error"}`);
    process.exitCode = 1;
  } else if (outcome.status === "nothing") {
    console.log("nothing to deliver: every finished run is delivered");
  } else {
    for (const file of outcome.values ?? []) console.log(`wrote ${file}`);
    console.log(`delivered runs ${outcome.runs.join(", ")}`);
  }
} finally {
  db.close();
}
