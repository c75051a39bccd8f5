/**
 * Run a sync from code: the run `benefits-sync sync` makes, from the same configuration
 * (benefits-sync.config.json in the working directory if there is one, then the BENEFITS_*
 * variables), with the same checks: the service the snapshot copies, its PII key, its lease.
 *
 *   BENEFITS_BASE_URL=https://… BENEFITS_API_KEY=… BENEFITS_DB=snapshot.db node sync-from-code.js
 *
 * Exits as the CLI does: 0 the run succeeded, 1 it failed (resumable: the next run goes on from
 * its last commit), 2 bad configuration or the wrong PII key (nothing changed), 75 another run
 * holds the snapshot (nothing changed: try again later). Guide: docs/library.md.
 */
import { ConfigError, loadConfig, runSyncJob } from "benefits-sync";

// Ctrl-C or a stop from a supervisor: the walk stops, the run is recorded failed and resumable.
const stop = new AbortController();
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => stop.abort(new Error(`stopped by ${signal}`)));

try {
  const config = loadConfig({ env: process.env });
  const report = await runSyncJob({
    config,
    signal: stop.signal,
    // Said once: a PII key generated beside the snapshot, fields the service started sending.
    onNotice: (message) => console.error(message),
  });
  if (report.runId === null) {
    // No run started and nothing changed: `busy` while another live run holds the lease.
    console.error(`no run started (${report.status}): ${report.error.message}`);
    process.exitCode = report.status === "busy" ? 75 : 1;
  } else {
    for (const [resource, c] of Object.entries(report.resources)) {
      console.log(`${resource}: ${c.seen} seen, ${c.inserted} inserted, ${c.updated} updated, ${c.deleted} deleted`);
    }
    const resumed = report.resumedFrom !== undefined ? ` (resumed run ${report.resumedFrom})` : "";
    console.log(`run ${report.runId} ${report.status}${resumed}${report.error ? `: ${report.error.message}` : ""}`);
    process.exitCode = report.status === "succeeded" ? 0 : 1;
  }
} catch (e) {
  // Bad configuration, a snapshot of another service, another PII key: each problem names its fix.
  if (!(e instanceof ConfigError)) throw e;
  for (const problem of e.problems) console.error(problem);
  process.exitCode = 2;
}
