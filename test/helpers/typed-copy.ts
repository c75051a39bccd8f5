/**
 * Typed copies of a snapshot, built from the records' JSON alone: what an analyst would build by
 * hand from the history (each version's JSON with the runs it was current in), in plain tables
 * named like the contract's views. A guide question run on the copy and on the snapshot must give
 * the same rows whatever the store's own layout (tables, indexes, triggers) is.
 */
import BetterSqlite3 from "better-sqlite3";
import type { Database } from "better-sqlite3";
import { changedFields } from "../../src/store/walk/field-diff.js";
import { ViewColumns, columnName, StoredResources, type StoredResource } from "../../src/store/schema/resources.js";

type Rec = Record<string, unknown>;

interface Version {
  id: string;
  json: Rec;
  data: string;
  hash: string;
  valid_from_run: number;
  valid_to_run: number | null;
  observed_at: string;
  op: string;
  ended_by: string | null;
}

/** The value at a dotted path as `json_extract` gives it: objects and lists as JSON text, booleans 1/0, missing null. */
export function atPath(rec: unknown, path: string): unknown {
  let v: unknown = rec;
  for (const k of path.split(".")) v = v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Rec)[k] : undefined;
  if (v === undefined || v === null) return null;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "object") return JSON.stringify(v);
  return v;
}

/**
 * Integer cents of a decimal amount sent as text with at most two decimals ("12.5", "-3.07",
 * "12."), null for anything else (a number, "1,234.50", "12.345"): the README's money rule,
 * computed on the digits.
 */
export function centsOf(v: unknown): number | null {
  if (typeof v !== "string") return null;
  const m = /^(-?)(\d*)(?:\.(\d{0,2}))?$/.exec(v);
  if (!m || !/\d/.test(v)) return null;
  const c = Number(m[2] || "0") * 100 + Number((m[3] ?? "").padEnd(2, "0"));
  return m[1] ? -c : c;
}

const MONEY: Partial<Record<StoredResource, readonly string[]>> = { claims: ["claimAmount", "allowedAmount", "paidAmount"] };

/** The typed columns of a resource: `[name, declared type, value of a record]`, in view order. */
function columns(snapshot: Database, r: StoredResource): { name: string; type: string; value: (rec: Rec) => unknown }[] {
  // The declared types are the contract's (TEXT for fields, none for amounts): read from the view.
  const declared = new Map((snapshot.prepare(`SELECT name, type FROM pragma_table_info('${r}')`).all() as { name: string; type: string }[]).map((c) => [c.name, c.type]));
  const out: { name: string; type: string; value: (rec: Rec) => unknown }[] = [];
  for (const p of ViewColumns[r]) {
    out.push({ name: columnName(p), type: declared.get(columnName(p)) ?? "", value: (rec) => atPath(rec, p) });
    if (MONEY[r]?.includes(p)) out.push({ name: `${columnName(p)}_cents`, type: "INTEGER", value: (rec) => centsOf(atPath(rec, p)) });
  }
  return out;
}

function table(db: Database, name: string, cols: { name: string; type?: string }[], rows: unknown[][]): void {
  db.exec(`CREATE TABLE "${name}" (${cols.map((c) => `"${c.name}"${c.type ? ` ${c.type}` : ""}`).join(", ")})`);
  const ins = db.prepare(`INSERT INTO "${name}" VALUES (${cols.map(() => "?").join(", ")})`);
  db.transaction(() => {
    for (const row of rows) ins.run(...row);
  })();
}

/** Every version of every record, read as JSON from the history views. */
function versions(snapshot: Database, r: StoredResource): Version[] {
  const rows = snapshot
    .prepare(`SELECT id, data, hash, valid_from_run, valid_to_run, observed_at, op, ended_by FROM "${r}_history" ORDER BY id, valid_from_run`)
    .all() as Omit<Version, "json">[];
  return rows.map((v) => ({ ...v, json: JSON.parse(v.data) as Rec }));
}

/**
 * An in-memory database with one plain table per view the guide reads (`members`,
 * `members_history`, ..., `claim_lines`, `memberships`, `changes`, `field_changes`, `runs`,
 * `run_counts`), made from the snapshot's recorded versions. Close it when done.
 */
export function typedCopy(snapshot: Database): Database {
  const db = new BetterSqlite3(":memory:");
  const changes: unknown[][] = [];
  const fieldChanges: unknown[][] = [];
  const byResource = new Map<StoredResource, Version[]>();
  for (const r of StoredResources) {
    const vs = versions(snapshot, r);
    byResource.set(r, vs);
    const cols = columns(snapshot, r);
    const typed = (v: Version) => cols.map((c) => c.value(v.json));
    table(db, r, [{ name: "id", type: "TEXT" }, ...cols, { name: "hash" }, { name: "data" }], vs.filter((v) => v.valid_to_run === null).map((v) => [v.id, ...typed(v), v.hash, v.data]));
    const meta = ["valid_from_run", "valid_to_run", "observed_at", "op", "ended_by"].map((name) => ({ name }));
    table(db, `${r}_history`, [{ name: "id", type: "TEXT" }, ...cols, { name: "hash" }, { name: "data" }, ...meta], vs.map((v) => [v.id, ...typed(v), v.hash, v.data, v.valid_from_run, v.valid_to_run, v.observed_at, v.op, v.ended_by]));
    for (const v of vs) {
      changes.push([v.valid_from_run, r, v.id, v.op]);
      if (v.ended_by === "delete") changes.push([v.valid_to_run, r, v.id, "delete"]);
      if (v.op !== "update") continue;
      // The version this one replaced: same id, closed by this version's run, as replaced.
      const before = vs.find((p) => p.id === v.id && p.valid_to_run === v.valid_from_run && p.ended_by === "update");
      if (!before) throw new Error(`${r} ${v.id}: an update at run ${v.valid_from_run} without the version it replaced`);
      for (const f of changedFields(before.json, v.json)) {
        const value = (rec: Rec, data: string) => (f === "(record)" ? data : atPath(rec, f));
        fieldChanges.push([v.valid_from_run, r, v.id, f, value(before.json, before.data), value(v.json, v.data)]);
      }
    }
  }
  table(db, "changes", ["run_id", "resource", "id", "op"].map((name) => ({ name })), changes);
  table(db, "field_changes", ["run_id", "resource", "id", "field", "old_value", "new_value"].map((name) => ({ name })), fieldChanges);
  const current = (r: StoredResource) => byResource.get(r)!.filter((v) => v.valid_to_run === null).map((v) => v.json);
  const lines: unknown[][] = [];
  for (const c of current("claims")) {
    ((c.lines as Rec[] | undefined) ?? []).forEach((l, i) => {
      lines.push([c.id, i + 1, atPath(c, "memberId"), atPath(c, "groupId"), atPath(c, "serviceDateFrom"), atPath(l, "code"), atPath(l, "amount"), centsOf(atPath(l, "amount"))]);
    });
  }
  table(db, "claim_lines", ["claim_id", "line_no", "memberId", "groupId", "serviceDateFrom", "code", "amount", "amount_cents"].map((name) => ({ name })), lines);
  const ms = memberships(current("coverages"));
  table(db, "memberships", ["memberId", "groupId", "coverages", "active_coverages", "first_start_date", "last_end_date"].map((name) => ({ name })), ms);
  // The counts the store keeps (rollups.ts), counted here from the records alone.
  const perGroup = new Map<string, [number, number]>();
  for (const [, groupId, , active] of ms as [string | null, string | null, number, number][]) {
    if (groupId === null) continue;
    const [n, a] = perGroup.get(groupId) ?? [0, 0];
    perGroup.set(groupId, [n + 1, a + (active > 0 ? 1 : 0)]);
  }
  table(db, "group_member_counts", ["groupId", "members", "active_members"].map((name) => ({ name })), [...perGroup].map(([g, [n, a]]) => [g, n, a]));
  const perMember = new Map<string, number>();
  for (const c of current("claims")) {
    const m = atPath(c, "memberId");
    if (m !== null) perMember.set(String(m), (perMember.get(String(m)) ?? 0) + 1);
  }
  table(db, "member_claim_counts", ["memberId", "claims"].map((name) => ({ name })), [...perMember]);
  const groupsOf = new Map<string, number>();
  for (const [memberId] of ms as [string | null][]) if (memberId !== null) groupsOf.set(memberId, (groupsOf.get(memberId) ?? 0) + 1);
  table(db, "members_in_several_groups", ["memberId", "groups"].map((name) => ({ name })), [...groupsOf].filter(([, n]) => n > 1));
  table(db, "procedure_totals", ["code", "lines", "claims", "amount_cents"].map((name) => ({ name })), procedureTotals(lines as unknown[][]));
  for (const v of ["runs", "run_counts"]) {
    const rows = snapshot.prepare(`SELECT * FROM ${v}`).raw().all() as unknown[][];
    const names = (snapshot.prepare(`SELECT name FROM pragma_table_info('${v}')`).pluck().all() as string[]).map((name) => ({ name }));
    table(db, v, names, rows);
  }
  return db;
}

/** One row per member and group with the member's current coverages in it (the contract's `memberships`). */
function memberships(coverages: Rec[]): unknown[][] {
  const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
  const by = new Map<string, Rec[]>();
  for (const c of coverages) {
    const k = JSON.stringify([text(c.memberId), text(c.groupId)]);
    by.set(k, [...(by.get(k) ?? []), c]);
  }
  return [...by].map(([k, cs]) => {
    const [memberId, groupId] = JSON.parse(k) as [string | null, string | null];
    const starts = cs.map((c) => text(c.startDate)).filter((s): s is string => s !== null).sort();
    const ends = cs.map((c) => text(c.endDate));
    const open = ends.some((e) => e === null);
    return [memberId, groupId, cs.length, cs.filter((c) => c.status === "active").length, starts[0] ?? null, open ? null : (ends as string[]).sort().at(-1)!];
  });
}

/**
 * Per line code (null included): the lines, the distinct claims with one, and the sum of the
 * lines' cents (null when none has cents), from `claim_lines` rows (claim_id first, code at 5,
 * cents at 7).
 */
function procedureTotals(lines: unknown[][]): unknown[][] {
  const by = new Map<string, { code: unknown; lines: number; claims: Set<unknown>; cents: number | null }>();
  for (const l of lines) {
    const k = JSON.stringify(l[5] ?? null);
    const t = by.get(k) ?? { code: l[5] ?? null, lines: 0, claims: new Set(), cents: null };
    t.lines++;
    t.claims.add(l[0]);
    if (typeof l[7] === "number") t.cents = (t.cents ?? 0) + l[7];
    by.set(k, t);
  }
  return [...by.values()].map((t) => [t.code, t.lines, t.claims.size, t.cents]);
}
