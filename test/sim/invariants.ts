/**
 * What must hold after every schedule (its quiet final sync and final delivery done). Each check
 * returns violations; a schedule fails when there is any. Messages name records by id only.
 */
import type { Database } from "better-sqlite3";
import { existsSync, readFileSync } from "node:fs";
import { countGroupings } from "../../bench/guide-questions.js";
import { WEBHOOK_JOB } from "../../src/store/runs/run-log.js";
import { snapshotState } from "../helpers/expected.js";
import type { DeliveryLog } from "./deliveries.js";
import { expectedClaim, expectedState } from "./expected.js";
import { WINDOW, type ServiceModel, type TrackedResource } from "./model.js";
import { TEXT_SEPARATORS } from "./phi-keys.js";

export const ViolationKinds = [
  "final-state",
  "false-delete",
  "unseen-delete",
  "double-change",
  "version-churn",
  "guard-bypassed",
  "guard-too-strict",
  "undelivered",
  "delivered-twice",
  "delivery",
  "replay",
  "ssn",
  "run-left-running",
  "crash-not-resumed",
  "runaway",
  "hung",
  "sync-threw",
  "final-sync-failed",
  "counts",
  // webhooks.ts: what each drain of the webhook worker must show.
  "webhook-lost-accepted",
  "webhook-drain-threw",
  "webhook-drain",
  "webhook-no-wait",
  "webhook-stale",
  "webhook-records",
  "webhook-false-delete",
  "webhook-second-effect",
  // outside.ts: another program reading the snapshot and the inbox while this process holds them.
  "outside-read",
  "outside-integrity",
  // prunes.ts: a prune of the history among the schedule's steps.
  "prune-lost-kept",
  "prune-held-changed",
  "prune-undelivered",
  "prune-left-history",
  "prune-integrity",
  // rekeys.ts: every writer writes under the snapshot's key.
  "key-written-under-old",
  "key-stale-version",
  "first-commands-key",
] as const;
export type ViolationKind = (typeof ViolationKinds)[number];

export interface Violation {
  readonly kind: ViolationKind;
  readonly message: string;
}

/** What the harness knows of each run it started. */
export interface RunRecord {
  readonly index: number;
  readonly runId: number | null;
  readonly status: string;
  readonly error?: string;
  readonly resumedFrom?: number;
  readonly startTick: number;
  readonly endTick: number;
  readonly allowDeletes: boolean;
  readonly crashed: boolean;
  readonly final: boolean;
  /** `resource:id` of every record the server's answers carried during this run. */
  readonly served: ReadonlySet<string>;
}

const Resources = ["designs", "groups", "plans", "members", "coverages", "claims"] as const;
const inWindow = (d: string | null | undefined) => typeof d === "string" && d >= WINDOW.from && d <= WINDOW.to;

/** (a) The snapshot's current views equal the model (claims: see below). */
export function checkFinalState(db: Database, model: ServiceModel, piiKey: Buffer, runs: readonly RunRecord[]): Violation[] {
  const expected = expectedState(model, piiKey);
  const snap = snapshotState(db);
  const out: string[] = [];
  for (const r of Resources) {
    if (r === "claims") continue;
    diffMaps(r, expected[r], snap[r], out);
  }
  // Claims: the walk reads the window only. Every claim the service has inside it is in the
  // snapshot as it is now; a stored claim the window does not hold is one whose service date
  // moved out of it (or that was deleted out there, where no walk looks): kept as last seen. It
  // is wrong when the stored version is inside the window (the window's walk and the lookup by
  // member settle such a claim), or when a run after the one that stored it was served the claim
  // with a date inside the window: that run kept it, or, failing, left it to be looked up. (Served
  // with a date outside, it is kept as last seen: a lookup by member applies only the claims it
  // asks about.) A claim that came back into the window and went between two runs was never there for any
  // run to read; nor was one read only by a process that then died (what it had not committed
  // died with it, and nothing in the service tells that the claim was ever back).
  const claimsIn = new Map<string, unknown>();
  for (const c of model.claims.values()) if (inWindow(c.serviceDateFrom)) claimsIn.set(c.id, expectedClaim(c, piiKey));
  for (const [id, want] of claimsIn) {
    const got = snap.claims.get(id);
    if (got === undefined) out.push(`claims ${id}: in the window on the service, missing from the snapshot`);
    else if (JSON.stringify(got) !== JSON.stringify(want)) out.push(`claims ${id}: differs (${changedKeys(want, got).join(", ")})`);
  }
  for (const id of snap.claims.keys()) {
    if (claimsIn.has(id)) continue;
    if (!model.lastClaim.has(id)) {
      out.push(`claims ${id}: in the snapshot, never on the service`);
      continue;
    }
    // Kept as the service has it now (outside the window): right.
    const now = model.claims.get(id);
    if (now !== undefined && JSON.stringify(snap.claims.get(id)) === JSON.stringify(expectedClaim(now, piiKey))) continue;
    const stored = db.prepare("SELECT serviceDateFrom, valid_from_run FROM claims_history WHERE id = ? AND valid_to_run IS NULL").get(id) as
      | { serviceDateFrom: string | null; valid_from_run: number }
      | undefined;
    const storedBy = runs.find((r) => r.runId === stored?.valid_from_run)?.index ?? -1;
    const seenInside = runs.some((r) => r.index > storedBy && !r.crashed && r.served.has(`claims@window:${id}`));
    if (inWindow(stored?.serviceDateFrom) || seenInside) out.push(`claims ${id}: in the snapshot, but the service ${model.claims.has(id) ? "has it elsewhere" : "deleted it"} while it was inside the window`);
  }
  return out.length ? [{ kind: "final-state", message: summarise(`the snapshot differs from the model in ${out.length} record(s)`, out) }] : [];
}

function diffMaps(r: string, want: Map<string, unknown>, got: Map<string, unknown>, out: string[]): void {
  for (const [id, w] of want) {
    const g = got.get(id);
    if (g === undefined) out.push(`${r} ${id}: on the service, missing from the snapshot`);
    else if (JSON.stringify(g) !== JSON.stringify(w)) out.push(`${r} ${id}: stale or wrong (${changedKeys(w, g).join(", ")})`);
  }
  for (const id of got.keys()) if (!want.has(id)) out.push(`${r} ${id}: in the snapshot, gone from the service`);
}

function changedKeys(a: unknown, b: unknown): string[] {
  const x = (a ?? {}) as Record<string, unknown>;
  const y = (b ?? {}) as Record<string, unknown>;
  return [...new Set([...Object.keys(x), ...Object.keys(y)])].filter((k) => JSON.stringify(x[k]) !== JSON.stringify(y[k])).sort();
}

function summarise(head: string, lines: string[], max = 8): string {
  return `${head}:\n    ${lines.slice(0, max).join("\n    ")}${lines.length > max ? `\n    ... and ${lines.length - max} more` : ""}`;
}

/** The first run of the chain of resumed runs that `runId` ends. */
export function chainStart(db: Database, runId: number): number {
  const prev = db.prepare("SELECT resumed_from FROM runs WHERE run_id = ?").pluck();
  let id = runId;
  for (let i = 0; i < 1000; i++) {
    const p = prev.get(id) as number | null | undefined;
    if (p === null || p === undefined) return id;
    id = p;
  }
  return id;
}

/**
 * (b) No record was recorded deleted by a run while the service had it during the whole of that
 * run's walk (from the start of the first run of its resumed chain to the end of the run).
 * `false-delete`: some answer of the walk listed the record, or it could not have moved out of
 * sight (a claim that left the window is still the service's), and it was deleted anyway.
 * `unseen-delete`: no answer of the walk listed it (it moved, mid-walk, from a part not yet read
 * to one already read: a coverage to another member, a member to another group).
 */
export function checkFalseDeletes(db: Database, model: ServiceModel, runs: readonly RunRecord[]): Violation[] {
  const byId = new Map(runs.filter((r) => r.runId !== null).map((r) => [r.runId!, r]));
  const deletes = db.prepare("SELECT run_id, resource, id FROM changes WHERE op = 'delete' ORDER BY run_id, resource, id").all() as {
    run_id: number;
    resource: TrackedResource;
    id: string;
  }[];
  const seen: string[] = [];
  const unseen: string[] = [];
  for (const d of deletes) {
    const startId = chainStart(db, d.run_id);
    const first = byId.get(startId);
    const last = byId.get(d.run_id);
    if (!first || !last) continue;
    if (!model.presentThroughout(d.resource, d.id, first.startTick, last.endTick)) continue;
    const chain = runs.filter((r) => r.runId !== null && r.runId >= startId && r.runId <= d.run_id);
    // Only a member (by its coverages) or a coverage (by its member) can move out of sight mid-walk.
    const movable = d.resource === "members" || d.resource === "coverages";
    const listed = !movable || chain.some((r) => r.served.has(`${d.resource}:${d.id}`));
    (listed ? seen : unseen).push(
      `run ${d.run_id}${startId !== d.run_id ? ` (resuming from run ${startId})` : ""} deleted ${d.resource} ${d.id}, which the service had all along`,
    );
  }
  const v: Violation[] = [];
  if (seen.length) v.push({ kind: "false-delete", message: summarise(`${seen.length} record(s) recorded deleted while the service had them`, seen) });
  if (unseen.length) {
    v.push({ kind: "unseen-delete", message: summarise(`${unseen.length} record(s) recorded deleted while the service had them (moved mid-walk, so no page of the walk listed them)`, unseen) });
  }
  return v;
}

/**
 * (f) One change per record per run. `double-change`: changes that contradict each other (an update
 * and a delete, an insert and a delete, two inserts: two current versions). `version-churn`: two
 * consistent changes (insert then update, two updates: a record seen twice in one walk because it
 * moved mid-walk), which leave a version that lasted no run and put the record twice in the deltas.
 */
export function checkDoubleChanges(db: Database): Violation[] {
  const rows = db
    .prepare("SELECT run_id, resource, id, group_concat(op, '+') AS ops, COUNT(*) AS n FROM changes GROUP BY run_id, resource, id HAVING n > 1 ORDER BY run_id")
    .all() as { run_id: number; resource: string; id: string; ops: string }[];
  const contradicts = (ops: string) => ops.includes("delete") || ops.split("+").filter((o) => o === "insert").length > 1;
  const line = (r: (typeof rows)[number]) => `run ${r.run_id} recorded ${r.resource} ${r.id} as ${r.ops}`;
  const hard = rows.filter((r) => contradicts(r.ops)).map(line);
  const soft = rows.filter((r) => !contradicts(r.ops)).map(line);
  const v: Violation[] = [];
  if (hard.length) v.push({ kind: "double-change", message: summarise(`${hard.length} record(s) changed twice in one run, contradictorily`, hard) });
  if (soft.length) v.push({ kind: "version-churn", message: summarise(`${soft.length} record(s) given two versions in one run`, soft) });
  return v;
}

/**
 * (g) A run that was not allowed to delete past the guard did not: per resource, deletes beyond
 * both the count and the share of the records it held. Children deleted with their deleted parent
 * count under the parent, not again on their own.
 */
export function checkGuard(db: Database, runs: readonly RunRecord[], policy: { maxDeleteShare: number; maxDeleteCount: number }): Violation[] {
  const out: string[] = [];
  for (const run of runs) {
    if (run.status !== "succeeded" || run.allowDeletes || run.runId === null) continue;
    const R = run.runId;
    for (const r of Resources) {
      const parent = r === "plans" ? "groups" : r === "coverages" ? "members" : undefined;
      const deleted = db
        .prepare(
          parent
            ? `SELECT COUNT(*) FROM _${r}_v v WHERE v.valid_to_run = ? AND v.ended_by = 'delete'
                 AND NOT EXISTS (SELECT 1 FROM _${parent}_v p WHERE p.id = v.part AND p.valid_to_run = ? AND p.ended_by = 'delete')`
            : `SELECT COUNT(*) FROM _${r}_v v WHERE v.valid_to_run = ? AND v.ended_by = 'delete' AND ? IS NOT NULL`,
        )
        .pluck()
        .get(R, R) as number;
      if (deleted <= policy.maxDeleteCount) continue;
      const held = db
        .prepare(`SELECT COUNT(DISTINCT id) FROM _${r}_v WHERE valid_from_run <= ? AND (valid_to_run IS NULL OR valid_to_run >= ?)`)
        .pluck()
        .get(R, R) as number;
      if (deleted > policy.maxDeleteShare * held) out.push(`run ${R} deleted ${deleted} of ${held} ${r} without --allow-deletes`);
    }
  }
  return out.length ? [{ kind: "guard-bypassed", message: summarise("deletes past the delete guard", out) }] : [];
}

/**
 * (c) Per output: every recorded change reached exactly one successful delivery, nothing else
 * was delivered, and replaying the delivered deltas in order gives the snapshot's current state.
 */
export function checkDeliveries(db: Database, log: DeliveryLog): Violation[] {
  const v: Violation[] = [];
  for (const p of log.problems) v.push({ kind: "delivery", message: p });
  const key = (r: { run_id: number; resource: string; id: string; op: string }) => `${r.run_id} ${r.resource} ${r.op} ${r.id}`;
  const recorded = db.prepare("SELECT run_id, resource, id, op FROM changes").all() as { run_id: number; resource: string; id: string; op: string }[];
  const delivered = new Map<string, number>();
  for (const r of log.rows) delivered.set(key(r), (delivered.get(key(r)) ?? 0) + 1);
  const recordedCount = new Map<string, number>();
  for (const r of recorded) recordedCount.set(key(r), (recordedCount.get(key(r)) ?? 0) + 1);
  const status = db.prepare("SELECT status FROM runs WHERE run_id = ?").pluck();
  const missing = recorded.filter((r) => !delivered.has(key(r)));
  if (missing.length) {
    const runs = [...new Set(missing.map((r) => r.run_id))].map((id) => `${id} (${String(status.get(id))})`);
    v.push({
      kind: "undelivered",
      message: summarise(`${missing.length} recorded change(s) never reached a delivery (runs ${runs.join(", ")})`, missing.map(key)),
    });
  }
  const twice = [...delivered].filter(([k, n]) => n > (recordedCount.get(k) ?? 0) && recordedCount.has(k)).map(([k, n]) => `${k} x${n}`);
  if (twice.length) v.push({ kind: "delivered-twice", message: summarise(`${twice.length} change(s) delivered more than once`, twice) });
  // A pruned run's changes are gone from the snapshot (prunes.ts checked they had all arrived).
  const pruned = new Set(db.prepare("SELECT run_id FROM _pruned_runs").pluck().all() as number[]);
  const phantom = [...delivered.keys()].filter((k) => !recordedCount.has(k) && !pruned.has(Number(k.split(" ")[0])));
  if (phantom.length) v.push({ kind: "delivery", message: summarise(`${phantom.length} delivered change(s) the snapshot does not record (reverted after delivery?)`, phantom) });
  const noData = log.rows.filter((r) => r.data === null).map(key);
  if (noData.length) v.push({ kind: "delivery", message: summarise(`${noData.length} delivered change(s) without the record's version`, noData) });

  // Replay: deliveries in the order received; within one, by run, then insert, update, delete
  // (the order the project's deltas document), then id.
  const rank: Record<string, number> = { insert: 0, update: 1, delete: 2 };
  const rows = [...log.rows].sort(
    (a, b) => a.seq - b.seq || a.run_id - b.run_id || (rank[a.op] ?? 3) - (rank[b.op] ?? 3) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  const state = new Map<string, Map<string, string | null>>(Resources.map((r) => [r, new Map()]));
  for (const r of rows) {
    const m = state.get(r.resource)!;
    if (r.op === "delete") m.delete(r.id);
    else m.set(r.id, r.data);
  }
  const out: string[] = [];
  for (const r of Resources) {
    const current = new Map((db.prepare(`SELECT id, data FROM ${r}`).all() as { id: string; data: string }[]).map((x) => [x.id, x.data]));
    const replayed = state.get(r)!;
    for (const [id, data] of current) {
      if (!replayed.has(id)) out.push(`${r} ${id}: current, but absent after replay`);
      else if (replayed.get(id) !== data) out.push(`${r} ${id}: the replayed version differs from the current one`);
    }
    for (const id of replayed.keys()) if (!current.has(id)) out.push(`${r} ${id}: present after replay, not current`);
  }
  if (out.length) v.push({ kind: "replay", message: summarise("replaying the delivered deltas does not give the snapshot", out) });
  return v.map((x) => (x.message.startsWith(log.output) ? x : { ...x, message: `${log.output}: ${x.message}` }));
}

/** Where an SSN must never be: the database file and its WAL, what was delivered, logged or reported. */
export interface SsnPlaces {
  readonly files: readonly string[];
  readonly texts: readonly { readonly where: string; readonly text: string }[];
}

// An SSN as it may be written: 3-2-4 digits with any two of the separators the model writes in
// text (dash, space, NBSP, the Unicode dashes, the minus sign), or nine digits standing alone.
const SEPARATED = new RegExp(`\\d{3}[${TEXT_SEPARATORS.join("")}]\\d{2}[${TEXT_SEPARATORS.join("")}]\\d{4}`, "g");
const ALONE = /(?<![0-9A-Za-z])\d{9}(?![0-9A-Za-z])/g;

/**
 * (d) No SSN of any member the model ever generated, dashed, spaced, with NBSP or a Unicode dash
 * (any two of them), or as nine digits standing alone (not inside a longer hex or number).
 */
export function checkSsns(ssns: readonly string[], places: SsnPlaces): Violation[] {
  const wanted = new Set(ssns.map((s) => s.replace(/\D/g, "")));
  const out: string[] = [];
  const scan = (where: string, text: string) => {
    const found = new Set<string>();
    for (const [re, form] of [[SEPARATED, "with separators"], [ALONE, "digits only"]] as const) {
      for (const m of text.matchAll(re)) {
        const d = m[0].replace(/\D/g, "");
        if (!wanted.has(d) || found.has(d + form)) continue;
        found.add(d + form);
        const how = form === "digits only" ? form : /^[\d-]+$/.test(m[0]) ? "dashed" : /^[\d ]+$/.test(m[0]) ? "spaced" : "NBSP/Unicode dash";
        out.push(`${where}: an SSN (${how}, ending ${d.slice(-4)}) at ${m.index}`);
      }
    }
  };
  for (const f of places.files) if (existsSync(f)) scan(f.replace(/^.*\//, ""), readFileSync(f).toString("utf8"));
  for (const t of places.texts) scan(t.where, t.text);
  return out.length ? [{ kind: "ssn", message: summarise(`${out.length} SSN(s) in plain text`, out) }] : [];
}

/** (e) After the final sync no run is left running, and the run after a crash resumed it. */
export function checkRunLog(db: Database, runs: readonly RunRecord[]): Violation[] {
  const v: Violation[] = [];
  const running = db.prepare("SELECT run_id FROM runs WHERE status = 'running'").pluck().all() as number[];
  if (running.length) {
    const crashed = new Set(runs.filter((r) => r.crashed).map((r) => r.runId));
    v.push({
      kind: "run-left-running",
      message: `run(s) ${running.map((id) => `${id}${crashed.has(id) ? " (crashed)" : ""}`).join(", ")} still 'running' after the final sync: never recognised dead`,
    });
  }
  const resumedFrom = db.prepare("SELECT resumed_from FROM runs WHERE run_id = ?").pluck();
  const status = db.prepare("SELECT status FROM runs WHERE run_id = ?").pluck();
  // The next sync: a webhook worker's run in between resumes nothing (it walks nothing).
  const nextRun = db.prepare(`SELECT MIN(run_id) FROM runs WHERE run_id > ? AND job <> '${WEBHOOK_JOB}'`).pluck();
  for (const r of runs) {
    if (!r.crashed || r.runId === null) continue;
    const next = nextRun.get(r.runId) as number | null;
    // A pruned run's line keeps no resumed_from: its chain was kept whole or pruned whole.
    if (next === null || status.get(next) === "pruned") continue;
    const from = resumedFrom.get(next) as number | null;
    if (from !== r.runId) v.push({ kind: "crash-not-resumed", message: `run ${r.runId} crashed; the next run ${next} ${from === null ? "started afresh" : `resumed run ${from}`} instead of resuming it` });
  }
  return v;
}

/**
 * (k) The counts the store keeps (group_member_counts, member_claim_counts, procedure_totals,
 * members_in_several_groups) equal the groupings of the views they summarise (countGroupings),
 * row for row: checked after each successful run and at the end, whatever the runs before did
 * (rollbacks, amends, deletes, resumed loads, webhook runs).
 */
export function checkCounts(db: Database, when: string): Violation[] {
  const v: Violation[] = [];
  for (const [name, grouped] of countGroupings) {
    const kept = `SELECT * FROM ${name}`;
    const extra = db.prepare(`SELECT COUNT(*) FROM (${kept} EXCEPT ${grouped})`).pluck().get() as number;
    const missing = db.prepare(`SELECT COUNT(*) FROM (${grouped} EXCEPT ${kept})`).pluck().get() as number;
    if (extra + missing > 0) v.push({ kind: "counts", message: `${when}: ${name} has ${extra} row(s) its grouping has not and lacks ${missing}` });
  }
  return v;
}
