/**
 * The scheduler's gauges, read from the snapshot's run history: per job its last run's status and
 * duration, its last success time and that run's record counts per resource; per walked resource,
 * the field paths the service added without notice. One reading, two outputs: the textfile
 * (telemetry.ts, `textfileMetrics`) and `GET /metrics` (scheduler-metrics.ts).
 */
import type { Database } from "better-sqlite3";
import { MaskedMarkers } from "../store/walk/field-masking.js";
import { label, metric } from "../prometheus-text.js";
import { maskedNewFieldCounts } from "../store/walk/new-fields.js";
import { WalkedResources } from "../store/schema/resources.js";
import type { Job } from "./job.js";
import { jobRunsSource } from "./report-runs.js";

export interface GaugeSample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
  /** The value as the textfile writes it, when not `String(value)`. */
  readonly text?: string;
}

/** A gauge family: `benefits_sync_<name>`. */
export interface GaugeFamily {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly samples: GaugeSample[];
}

/** Every gauge family, in the textfile's order, with its samples as the snapshot holds them now. */
export function jobGauges(db: Database, jobs: readonly Job[]): GaugeFamily[] {
  const runs = jobRunsSource(db);
  const last = db.prepare(`SELECT run_id, status, started_at, finished_at FROM ${runs} WHERE job = ? AND status <> 'running' ORDER BY started_at DESC, run_id DESC LIMIT 1`);
  const lastOk = db.prepare(`SELECT run_id, finished_at FROM ${runs} WHERE job = ? AND status = 'succeeded' ORDER BY started_at DESC, run_id DESC LIMIT 1`);
  const counts = db.prepare("SELECT resource, seen, inserted, updated, deleted FROM _run_counts WHERE run_id = ?");
  const family = (name: string, help: string, labelNames: string[]): GaugeFamily => ({ name, help, labelNames, samples: [] });
  const success = family("job_last_success_timestamp_seconds", "When the job last succeeded (end of the run), Unix seconds.", ["job"]);
  const status = family("job_last_run_succeeded", "1 when the job's last finished run succeeded, 0 when it failed.", ["job"]);
  const duration = family("job_last_run_duration_seconds", "How long the job's last finished run took.", ["job"]);
  const records = family("job_last_success_records", "Records of the job's last successful run, per resource and what happened to them.", ["job", "resource", "what"]);
  const newFields = family("new_field_paths", "Field paths the service sent that benefits-sync does not know, per resource (`benefits-sync doctor` lists them).", ["resource"]);
  const masked = family(
    "new_field_paths_masked",
    "Of those, the ones the SSN rule masked, per resource and how: by its name, a typed pair's value, a shape in its text.",
    ["resource", "masked"],
  );
  // Every resource has its line, 0 included: an alert on an increase needs the series before the first path.
  const newPaths = new Map((db.prepare("SELECT resource, count(*) AS n FROM new_fields GROUP BY resource").all() as { resource: string; n: number }[]).map((r) => [r.resource, r.n]));
  for (const r of WalkedResources) newFields.samples.push({ labels: { resource: r }, value: newPaths.get(r) ?? 0 });
  const maskedCounts = new Map(maskedNewFieldCounts(db).map((c) => [`${c.resource} ${c.masked}`, c.n]));
  for (const r of WalkedResources) for (const m of MaskedMarkers) masked.samples.push({ labels: { resource: r, masked: m }, value: maskedCounts.get(`${r} ${m}`) ?? 0 });
  for (const j of jobs) {
    const run = last.get(j.name) as { run_id: number; status: string; started_at: string; finished_at: string | null } | undefined;
    if (run) {
      status.samples.push({ labels: { job: j.name }, value: run.status === "succeeded" ? 1 : 0 });
      if (run.finished_at) {
        const seconds = (Date.parse(run.finished_at) - Date.parse(run.started_at)) / 1000;
        duration.samples.push({ labels: { job: j.name }, value: seconds, text: seconds.toFixed(3) });
      }
    }
    const ok = lastOk.get(j.name) as { run_id: number | null; finished_at: string } | undefined;
    if (!ok) continue;
    success.samples.push({ labels: { job: j.name }, value: Math.floor(Date.parse(ok.finished_at) / 1000) });
    for (const c of counts.all(ok.run_id) as { resource: string; seen: number; inserted: number; updated: number; deleted: number }[]) {
      for (const what of ["seen", "inserted", "updated", "deleted"] as const) records.samples.push({ labels: { job: j.name, resource: c.resource, what }, value: c[what] });
    }
  }
  return [success, status, duration, records, newFields, masked];
}

/** The families as Prometheus text (the textfile's). */
export function gaugeText(families: readonly GaugeFamily[]): string {
  return families
    .map(
      (f) =>
        metric(f.name, f.help) +
        f.samples.map((s) => `benefits_sync_${f.name}{${Object.entries(s.labels).map(([k, v]) => `${k}="${label(v)}"`).join(",")}} ${s.text ?? s.value}\n`).join(""),
    )
    .join("");
}
