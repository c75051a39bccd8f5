/**
 * What `export --state` and `export --history` write, view by view: the SQL that streams a view's
 * rows as of run N (the current versions then) or every version up to run N, and the columns of
 * its file, typed as the delta files type them (typed-fields.ts): dates as DATE, money as exact
 * DECIMAL(18,2), instants as TIMESTAMP, the rest as text, then `hash` and `data` (the record as
 * stored, JSON). History adds `valid_from_run`, `valid_to_run` (null while current as of N), the
 * runs' start times as `valid_from` / `valid_to`, `is_current` and `is_deleted` (the version ended
 * because the record was deleted, by run `valid_to_run`).
 *
 * Rows come in the order the snapshot recorded the versions (`vid`), read straight off the version
 * table: nothing is sorted and nothing is held, so memory is bounded by the writer's row group.
 */
import { jsonMayHoldSsn } from "../../pii/ssn-key.js";
import { StoredResources, ViewColumns, type StoredResource } from "../../store/schema/resources.js";
import { plainFreeValue, withoutPlainSsn } from "../plain-ssn.js";
import { childFieldType, typedFields, type FieldType } from "../typed-fields.js";

export type StateKind = "state" | "history";

export type StateType = FieldType | "string" | "int64" | "json" | "boolean";

/** One column: its name, type, and the value a prepared row holds for it (as SQLite gives it; `data` as JSON text). */
export interface StateColumn {
  readonly name: string;
  readonly type: StateType;
  readonly required?: boolean;
  readonly at: (row: StateRow) => unknown;
}

/** A row as read, with `data` made free of any plain SSN (a `--pii keep` snapshot's) and the runs' times looked up. */
export type StateRow = readonly unknown[];

export interface StateView {
  /** The file's name without its extension: the view's (`members`, `claim_lines`). */
  readonly name: string;
  /** Named parameter `@n`: the run. */
  readonly sql: string;
  readonly columns: readonly StateColumn[];
  /** Make a raw row safe to write (no plain SSN). */
  readonly prepare: (raw: unknown[]) => StateRow;
}

/** The SQL condition "version `v` is the one current as of run @n" (as reports/as-of.ts asks it). */
const asOf = (v: string) => `${v}.valid_from_run <= @n AND (${v}.valid_to_run IS NULL OR ${v}.valid_to_run > @n)`;

/** The validity of version `v` as of run @n: from, to (null while current then), and whether a delete ended it. */
const validity = (v: string, c: string) =>
  `, ${v}.valid_from_run, CASE WHEN ${v}.valid_to_run <= @n THEN ${v}.valid_to_run END, ` +
  `CASE WHEN ${v}.valid_to_run <= @n AND ${c}.ended_by = 'delete' THEN 1 ELSE 0 END`;

/**
 * The history columns after the view's own, at row index `i` on: the runs' start times come from
 * `runStart` (every run of the snapshot, by id).
 */
function historyColumns(i: number, runStart: ReadonlyMap<number, string>): StateColumn[] {
  const time = (run: unknown) => (run === null ? null : runStart.get(run as number) ?? null);
  return [
    { name: "valid_from_run", type: "int64", required: true, at: (r) => r[i] },
    { name: "valid_to_run", type: "int64", at: (r) => r[i + 1] },
    { name: "valid_from", type: "timestamp", required: true, at: (r) => time(r[i]) },
    { name: "valid_to", type: "timestamp", at: (r) => time(r[i + 1]) },
    { name: "is_current", type: "boolean", required: true, at: (r) => r[i + 1] === null },
    { name: "is_deleted", type: "boolean", required: true, at: (r) => r[i + 2] === 1 },
  ];
}

function resourceView(r: StoredResource, kind: StateKind, runStart: ReadonlyMap<number, string>): StateView {
  const fields = typedFields(r);
  const typed = fields.map((f) => `, v."${f.name}"`).join("");
  const where = kind === "state" ? asOf("v") : "v.valid_from_run <= @n";
  const data = fields.length + 2;
  const columns: StateColumn[] = [
    { name: "id", type: "string", required: true, at: (row) => row[0] },
    ...fields.map((f, i): StateColumn => ({ name: f.name, type: f.type, at: (row) => row[i + 1] })),
    { name: "hash", type: "string", required: true, at: (row) => row[data - 1] },
    { name: "data", type: "json", required: true, at: (row) => row[data] },
    ...(kind === "history" ? historyColumns(data + 1, runStart) : []),
  ];
  const paths = ViewColumns[r];
  return {
    name: r,
    sql: `SELECT v.id${typed}, d.hash, d.data${kind === "history" ? validity("v", "v") : ""} FROM _${r}_v v JOIN _${r}_d d ON d.vid = v.vid WHERE ${where} ORDER BY v.vid`,
    columns,
    prepare(raw) {
      const text = raw[data] as string;
      // Only a text the PII rule says may hold a plain SSN needs a look, as in the delta files (run-deltas.ts).
      if (!jsonMayHoldSsn(text)) return raw;
      const row = [...raw];
      row[data] = JSON.stringify(withoutPlainSsn(JSON.parse(text) as Record<string, unknown>));
      for (let i = 0; i < paths.length; i++) row[i + 1] = plainFreeValue(paths[i]!, raw[i + 1]);
      return row;
    },
  };
}

/** The claim lines (the contract's `claim_lines` view): one row per line of the claim's version, with the claim's member, group and service date. */
function claimLinesView(kind: StateKind, runStart: ReadonlyMap<number, string>): StateView {
  const claimCols = ["memberId", "groupId", "serviceDateFrom"] as const;
  const columns: StateColumn[] = [
    { name: "claim_id", type: "string", required: true, at: (r) => r[0] },
    { name: "line_no", type: "int64", required: true, at: (r) => r[1] },
    ...claimCols.map((c, i): StateColumn => ({ name: c, type: c === "serviceDateFrom" ? "date" : "text", at: (r) => r[i + 2] })),
    { name: "code", type: childFieldType("claim_lines", "code"), at: (r) => r[5] },
    { name: "amount", type: childFieldType("claim_lines", "amount"), at: (r) => r[6] },
    ...(kind === "history" ? historyColumns(7, runStart) : []),
  ];
  const where = kind === "state" ? asOf("l") : "l.valid_from_run <= @n";
  return {
    name: "claim_lines",
    sql:
      `SELECT c.id, CAST(l.key AS INTEGER) + 1, ${claimCols.map((x) => `c."${x}"`).join(", ")}, l.code, l.amount${kind === "history" ? validity("l", "c") : ""} ` +
      `FROM _claim_lines l JOIN _claims_v c ON c.vid = l.vid WHERE ${where} ORDER BY l.vid, l.key`,
    columns,
    prepare: (raw) => raw,
  };
}

/** Every view a state or history export writes, in file order: the stored resources, then the claim lines. */
export function stateViews(kind: StateKind, runStart: ReadonlyMap<number, string>): StateView[] {
  return [...StoredResources.map((r) => resourceView(r, kind, runStart)), claimLinesView(kind, runStart)];
}
