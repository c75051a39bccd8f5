import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { createClient } from "../api/client.js";
import type { ChangeSet } from "../sandbox/changes.js";
import { startSandbox } from "../sandbox/index.js";
import { writeRunCsv, type RunCsvResult } from "../sinks/csv/write-run-csv.js";
import { openDatabase } from "../store/file/database.js";
import { loadOrCreatePiiKey } from "../store/pii/pii.js";
import { SnapshotStore } from "../store/snapshot.js";
import { rollingWindow } from "../extract/scopes.js";
import { reconcile } from "../reports/reconcile.js";
import type { ReconcileReport } from "../reports/reconcile-report.js";
import { sync, type RunReport, type SyncProgress } from "./sync.js";
import { inboxPathFor } from "../webhooks/inbox.js";
import { webhookDay, type WebhookDemoResult } from "./demo-webhooks.js";

export interface DemoOptions {
  readonly outDir: string;
  readonly members?: number;
  readonly seed?: number;
  readonly say?: (line: string) => void;
  /** A fresh progress reporter for each run. */
  readonly progress?: () => { update(p: SyncProgress): void; finish(): void };
}

export interface DemoResult {
  readonly dbPath: string;
  readonly first: RunReport;
  readonly second: RunReport;
  readonly changeSet: ChangeSet;
  readonly deltas: RunCsvResult;
  /** The second run's recorded changes equal the sandbox's ground truth (within the claims window). */
  readonly matchesGroundTruth: boolean;
  /** The reconciliation of the first run with the second. */
  readonly report: ReconcileReport;
  /** A second day, announced by webhooks and applied by the worker alone. */
  readonly webhooks: WebhookDemoResult;
}

const DEMO_MEMBERS = 5000;
/** A fixed simulated today, so every demo tells the same story whatever the date. */
const DEMO_TODAY = "2026-01-15";

/** The demo's claims lookback: long enough to hold every claim the sandbox generates. */
const DEMO_LOOKBACK_DAYS = 365;

/**
 * The whole story on an in-process sandbox: sync, a simulated day of changes, sync again, write
 * that run's deltas, check the recorded changes against the sandbox's ground truth, and reconcile
 * the two runs into a report.
 */
export async function runDemo(opts: DemoOptions): Promise<DemoResult> {
  const say = opts.say ?? (() => {});
  const outDir = resolve(opts.outDir);
  mkdirSync(outDir, { recursive: true });
  const dbPath = join(outDir, "demo.db");
  // The demo starts from nothing each time; it only ever removes its own files.
  const inboxPath = inboxPathFor(dbPath);
  for (const f of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`, inboxPath, `${inboxPath}-wal`, `${inboxPath}-shm`]) if (existsSync(f)) rmSync(f);
  // Its deltas folder belongs to the snapshot just removed (an output takes one snapshot's runs):
  // removed too, when it holds nothing but run folders (and their hidden staging), as it writes them.
  const deltasDir = join(outDir, "deltas");
  if (existsSync(deltasDir) && readdirSync(deltasDir).every((n) => /^\d+$|^\.\d+\.tmp-/.test(n))) rmSync(deltasDir, { recursive: true, force: true });
  // One record of each kind the report's consistency checks look for, so the report has findings to show.
  const sb = await startSandbox({ members: opts.members ?? DEMO_MEMBERS, seed: opts.seed ?? 1, today: DEMO_TODAY, inconsistencies: true });
  const client = createClient({ baseUrl: sb.baseUrl, apiKey: sb.keys.full });
  const db = openDatabase(dbPath);
  try {
    const { key } = loadOrCreatePiiKey(dbPath, undefined);
    const store = new SnapshotStore(db, { piiKey: key });
    say(`Sandbox: ${sb.baseUrl}, simulated today ${sb.today}, ${opts.members ?? DEMO_MEMBERS} members`);
    const window = () => rollingWindow(new Date(`${sb.today}T00:00:00Z`), DEMO_LOOKBACK_DAYS);
    const run = async (job: string) => {
      const progress = opts.progress?.();
      const report = await sync({ source: client, store, job, claimsWindow: window(), ...(progress ? { onProgress: (p: SyncProgress) => progress.update(p) } : {}) });
      progress?.finish();
      return report;
    };
    const first = await run("demo");
    if (first.status !== "succeeded") throw new Error(`the first sync failed: ${first.error?.message}`);
    say(`Run ${first.runId}: first full sync, ${total(first, "inserted")} records inserted in ${(first.durationMs / 1000).toFixed(1)} s`);
    const changeSet = await sb.advance();
    say(`Simulated day ${changeSet.day}: ${summarizeChangeSet(changeSet)}`);
    const second = await run("demo");
    if (second.status !== "succeeded") throw new Error(`the second sync failed: ${second.error?.message}`);
    const recorded = db.prepare("SELECT resource, op, id FROM changes WHERE run_id = ?").all(second.runId) as { resource: string; op: string; id: string }[];
    const truth = Object.entries(changeSet.changes).flatMap(([r, c]) => [
      ...c.inserted.map((id) => `${r} insert ${id}`),
      ...c.updated.map((id) => `${r} update ${id}`),
      ...c.deleted.map((id) => `${r} delete ${id}`),
    ]);
    const matches = JSON.stringify(recorded.map((c) => `${c.resource} ${c.op} ${c.id}`).sort()) === JSON.stringify(truth.sort());
    const deltas = writeRunCsv(db, second.runId, join(outDir, "deltas"));
    // The sandbox's calendar is simulated: plan years are judged against its today, not the clock's.
    const report = reconcile(db, { from: String(first.runId), to: String(second.runId), outDir: join(outDir, "report"), asOf: sb.today });
    const webhooks = await webhookDay(sb, client, store, inboxPath);
    return { dbPath, first, second, changeSet, deltas, matchesGroundTruth: matches, report, webhooks };
  } finally {
    db.close();
    await client.close();
    await sb.close();
  }
}

function total(r: RunReport, k: "inserted" | "updated" | "deleted"): number {
  return Object.values(r.resources).reduce((n, c) => n + (c?.[k] ?? 0), 0);
}

function summarizeChangeSet(cs: ChangeSet): string {
  return Object.entries(cs.changes)
    .filter(([, c]) => c.inserted.length + c.updated.length + c.deleted.length > 0)
    .map(([r, c]) => `${r} +${c.inserted.length} ~${c.updated.length} -${c.deleted.length}`)
    .join(", ");
}
