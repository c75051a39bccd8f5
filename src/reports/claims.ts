/**
 * Claims at A and at B: counts and billed, allowed and paid sums by status and group, the status
 * transitions between the two runs and the paid-amount movement. Sums are SQLite integer sums of
 * the snapshot's cents columns, read as BigInt: exact to the cent at any size. The report checks
 * that A + transitions = B for every status, in count and in each amount.
 */
import { asOf, createMoves, params, type ReportScope } from "./as-of.js";
import { centsToDecimal, sqlInteger } from "./money.js";
import { cmp } from "./order.js";

export const Amounts = ["billed", "allowed", "paid"] as const;
export type Amount = (typeof Amounts)[number];
const column: Record<Amount, string> = { billed: "claimAmount", allowed: "allowedAmount", paid: "paidAmount" };

/** A count and three exact sums (decimal strings, e.g. "1234.50"). */
export interface ClaimTotals {
  count: number;
  billed: string;
  allowed: string;
  paid: string;
}

export interface ClaimTransition {
  /** A status, or "(new)" for a claim absent at A. */
  from: string;
  /** A status, or "(removed)" for a claim absent at B. */
  to: string;
  count: number;
  /** Paid at B minus paid at A, over these claims. */
  paidChange: string;
}

export interface ClaimsFigures {
  from: ClaimTotals;
  to: ClaimTotals;
  byStatus: { status: string; from: ClaimTotals; to: ClaimTotals }[];
  byGroup: { groupId: string; status: string; from: ClaimTotals; to: ClaimTotals }[];
  transitions: ClaimTransition[];
  /** Where the paid total moved: new claims, removed claims, claims present at both. */
  paidMovement: { newClaims: string; removedClaims: string; changedClaims: string; total: string };
  /** Per status: A minus what left plus what came equals B, in count and in each amount. */
  arithmetic: { status: string; holds: boolean }[];
  holds: boolean;
}

const NEW = "(new)";
const REMOVED = "(removed)";
const NONE = "(none)";

interface Sums {
  count: bigint;
  billed: bigint;
  allowed: bigint;
  paid: bigint;
}
const zero = (): Sums => ({ count: 0n, billed: 0n, allowed: 0n, paid: 0n });
const add = (t: Sums, u: Sums, sign = 1n): void => {
  t.count += sign * u.count;
  for (const k of Amounts) t[k] += sign * u[k];
};
const totals = (t: Sums): ClaimTotals => ({ count: Number(t.count), billed: centsToDecimal(t.billed), allowed: centsToDecimal(t.allowed), paid: centsToDecimal(t.paid) });
const eq = (t: Sums, u: Sums): boolean => t.count === u.count && Amounts.every((k) => t[k] === u[k]);

export function claimsFigures(scope: ReportScope): ClaimsFigures {
  const { db } = scope;
  const p = params(scope);
  const sums = (alias: string, cond: string) =>
    [`SUM(CASE WHEN ${cond} THEN 1 ELSE 0 END) AS ${alias}_count`, ...Amounts.map((k) => `SUM(CASE WHEN ${cond} THEN "${column[k]}_cents" END) AS ${alias}_${k}`)].join(", ");
  const read = (r: Record<string, unknown>, alias: string): Sums => ({
    count: sqlInteger(r[`${alias}_count`]),
    billed: sqlInteger(r[`${alias}_billed`]),
    allowed: sqlInteger(r[`${alias}_allowed`]),
    paid: sqlInteger(r[`${alias}_paid`]),
  });
  const scan = db
    .prepare(
      `SELECT groupId, claimStatus AS status, ${sums("a", asOf("v", ":a"))}, ${sums("b", asOf("v", ":b"))}
       FROM _claims_v v
       WHERE v.valid_from_run <= max(:a, :b) AND (v.valid_to_run IS NULL OR v.valid_to_run > min(:a, :b))
       GROUP BY 1, 2`,
    )
    .safeIntegers(true)
    .all(p) as Record<string, unknown>[];
  const statusFrom = new Map<string, Sums>();
  const statusTo = new Map<string, Sums>();
  const all = { from: zero(), to: zero() };
  const byGroup: ClaimsFigures["byGroup"] = [];
  const into = (m: Map<string, Sums>, k: string): Sums => {
    let x = m.get(k);
    if (!x) m.set(k, (x = zero()));
    return x;
  };
  for (const r of scan) {
    const status = r.status === null ? NONE : String(r.status);
    const a = read(r, "a");
    const b = read(r, "b");
    add(into(statusFrom, status), a);
    add(into(statusTo, status), b);
    add(all.from, a);
    add(all.to, b);
    if (a.count + b.count > 0n) byGroup.push({ groupId: r.groupId === null ? "" : String(r.groupId), status, from: totals(a), to: totals(b) });
  }
  byGroup.sort((x, y) => cmp(x.groupId, y.groupId) || cmp(x.status, y.status));

  // The claims that moved, grouped by (status at A or "(new)", status at B or "(removed)").
  const moves = createMoves(scope, "claims");
  const side = (alias: string) => [`COUNT(*) AS n`, ...Amounts.map((k) => `SUM(${alias}."${column[k]}_cents") AS ${alias}_${k}`)].join(", ");
  const moved = db
    .prepare(
      `SELECT m.a_vid IS NULL AS is_new, m.b_vid IS NULL AS is_removed, x.claimStatus AS a_status, y.claimStatus AS b_status,
              ${side("x")}, ${Amounts.map((k) => `SUM(y."${column[k]}_cents") AS y_${k}`).join(", ")}
       FROM ${moves} m LEFT JOIN _claims_v x ON x.vid = m.a_vid LEFT JOIN _claims_v y ON y.vid = m.b_vid
       GROUP BY 1, 2, 3, 4`,
    )
    .safeIntegers(true)
    .all() as Record<string, unknown>[];
  const expect = new Map<string, Sums>();
  for (const [k, v] of statusFrom) add(into(expect, k), v);
  const transitions: ClaimTransition[] = [];
  const paid = { newClaims: 0n, removedClaims: 0n, changedClaims: 0n };
  for (const r of moved) {
    const from = r.is_new ? NEW : r.a_status === null ? NONE : String(r.a_status);
    const to = r.is_removed ? REMOVED : r.b_status === null ? NONE : String(r.b_status);
    const n = sqlInteger(r.n);
    const left: Sums = { count: r.is_new ? 0n : n, billed: sqlInteger(r.x_billed), allowed: sqlInteger(r.x_allowed), paid: sqlInteger(r.x_paid) };
    const came: Sums = { count: r.is_removed ? 0n : n, billed: sqlInteger(r.y_billed), allowed: sqlInteger(r.y_allowed), paid: sqlInteger(r.y_paid) };
    if (!r.is_new) add(into(expect, from), left, -1n);
    if (!r.is_removed) add(into(expect, to), came);
    const change = came.paid - left.paid;
    if (r.is_new) paid.newClaims += change;
    else if (r.is_removed) paid.removedClaims += change;
    else paid.changedClaims += change;
    transitions.push({ from, to, count: Number(n), paidChange: centsToDecimal(change) });
  }
  transitions.sort((x, y) => cmp(x.from, y.from) || cmp(x.to, y.to));
  const statuses = [...new Set([...statusFrom.keys(), ...statusTo.keys(), ...expect.keys()])].sort();
  const arithmetic = statuses.map((status) => ({ status, holds: eq(expect.get(status) ?? zero(), statusTo.get(status) ?? zero()) }));
  const totalChange = paid.newClaims + paid.removedClaims + paid.changedClaims;
  return {
    from: totals(all.from),
    to: totals(all.to),
    byStatus: statuses.map((status) => ({ status, from: totals(statusFrom.get(status) ?? zero()), to: totals(statusTo.get(status) ?? zero()) })),
    byGroup,
    transitions,
    paidMovement: { newClaims: centsToDecimal(paid.newClaims), removedClaims: centsToDecimal(paid.removedClaims), changedClaims: centsToDecimal(paid.changedClaims), total: centsToDecimal(totalChange) },
    arithmetic,
    holds: arithmetic.every((x) => x.holds) && all.from.paid + totalChange === all.to.paid,
  };
}
