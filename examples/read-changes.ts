/**
 * Read a run's changes: every insert, update and delete run N recorded, resource by resource, as
 * a sink receives them (`runDeltas`, oldest run first, then inserts, updates, deletes). The
 * snapshot is opened read-only: reading never waits for a running sync and changes nothing.
 *
 *   BENEFITS_DB=snapshot.db node read-changes.js        # the last succeeded run
 *   BENEFITS_DB=snapshot.db node read-changes.js 7      # run 7
 *
 * Prints one line per change: `RESOURCE OP ID [FIELD,FIELD…]` (the changed fields of an update).
 * Records carry SSN tokens, never SSNs. Exits 2 for a run that is not there or not finished.
 */
import { openDatabase, runDeltas, StoredResources } from "benefits-sync";

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

const arg = process.argv[2];
if (arg !== undefined && !/^[1-9][0-9]*$/.test(arg)) fail(`expected a run id (a positive whole number), got "${arg}"`);
const db = openDatabase(process.env.BENEFITS_DB ?? "benefits-sync.db", { readonly: true });
try {
  // The `runs` view is part of the snapshot's documented schema (docs/outputs.md).
  const runId = arg !== undefined ? Number(arg) : (db.prepare("SELECT max(run_id) FROM runs WHERE status = 'succeeded'").pluck().get() as number | null);
  if (runId === null) fail("this snapshot has no succeeded run yet: run a sync first");
  const status = db.prepare("SELECT status FROM runs WHERE run_id = ?").pluck().get(runId) as string | undefined;
  if (status === undefined) fail(`there is no run ${runId} in this snapshot (see the runs view, or \`benefits-sync runs\`)`);
  if (status === "running") fail(`run ${runId} is still running: its changes are not complete; read it once it has finished`);
  let count = 0;
  for (const resource of StoredResources) {
    for (const change of runDeltas(db, resource, [runId])) {
      const fields = change.changedFields ? ` ${change.changedFields.join(",")}` : "";
      console.log(`${resource} ${change.op} ${change.id}${fields}`);
      count++;
    }
  }
  console.log(`run ${runId} (${status}): ${count} changes`);
} finally {
  db.close();
}
