/**
 * What a fire's end line says, for whoever reads the log when something is wrong: per sink, what
 * it received (the folders written with their paths and rows per file; rows loaded per table in a
 * warehouse), and for a failed fire, why, in one sentence. Every text from elsewhere (a run's
 * error, a sink's) goes through redact(): the log may go to a shipper that does not redact.
 */
import { redact } from "../errors.js";
import type { DeltaFolder } from "../sinks/files/folder-sink.js";
import type { OutputDelivery } from "../sinks/outputs.js";
import type { WarehouseLoad } from "../sinks/postgres/postgres-sink.js";
import type { JobReport } from "./run-job.js";

type Err = { readonly code: string; readonly message: string };
const clean = (e: Err): Err => ({ code: e.code, message: redact(e.message) });

/** Per sink the job delivered to: where, how it went, and what it received. */
export function sinksReceived(deliveries: readonly OutputDelivery[]): Record<string, unknown>[] {
  return deliveries.map((d) => {
    const o = d.outcome;
    const head = { ...(d.spec.name ? { sink: d.spec.name } : {}), kind: d.spec.kind, output: d.target, status: o.status, runs: o.runs };
    if (o.error) return { ...head, ...(o.delivered?.length ? { delivered: o.delivered } : {}), error: clean(o.error) };
    if (d.spec.kind === "folder") {
      const folders = (o.values ?? (o.value ? [o.value] : [])) as readonly DeltaFolder[];
      return { ...head, folders: folders.map((f) => ({ dir: f.dir, rows: Object.fromEntries(f.files.filter((x) => x.rows > 0).map((x) => [x.file, x.rows])) })) };
    }
    const load = o.value as WarehouseLoad | undefined;
    return { ...head, ...(load ? { loadedRuns: load.loadedRuns, rows: load.changes } : {}) };
  });
}

/** Why a fire ended failed, in one sentence; undefined when it did not. */
export function whyFailed(report: JobReport): string | undefined {
  if (report.error) return redact(`the run failed (${report.error.code}): ${report.error.message}`);
  const failed = (report.deliveries ?? []).filter((d) => d.outcome.status === "failed");
  if (failed.length === 0) return undefined;
  const each = failed.map((d) => `the delivery to ${d.spec.name ? `sink ${d.spec.name} ` : ""}(${d.target}) failed (${d.outcome.error?.code ?? "DELIVERY"}): ${d.outcome.error?.message ?? "unknown error"}`);
  return redact(`run ${report.runId} ${report.status}, but ${each.join("; and ")}; the next run delivers what is pending`);
}

/** Why a fire failed before its run could report (the snapshot locked past its timeout, a bug). */
export function whyThrown(e: unknown): { why: string; error: Err } {
  const error = clean({ code: (e as { code?: string }).code ?? "ERROR", message: e instanceof Error ? e.message : String(e) });
  return { why: `the fire failed before its run ended (${error.code}): ${error.message}`, error };
}
