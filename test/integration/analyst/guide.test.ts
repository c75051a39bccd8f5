/**
 * The analyst's guide's example questions (README, "Questions, answered in SQL", and docs/analyst-guide.md), run as written against a
 * snapshot synced from the sandbox, each answer compared with one computed in TypeScript from the
 * sandbox's own data (never from the snapshot). A question added to the README without a check
 * here, or a check whose question left the README, fails.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changedFields } from "../../../src/store/walk/field-diff.js";
import type { StoredResource } from "../../../src/store/schema/resources.js";
import { guideQuestions, guideWorld } from "../../helpers/guide-questions.js";
import { diffStates, expectedState, type State } from "../../helpers/expected.js";
import { atPath } from "../../helpers/typed-copy.js";
import { ALL_CLAIMS, sandboxData } from "../../helpers/sandbox-truth.js";
import { syncStarted, TEST_PII_KEY, type TempStore } from "../../helpers/temp-store.js";

// ---------------------------------------------------------------------------------------------
// The questions, as the README and docs/analyst-guide.md state them.

const questions = guideQuestions();

// ---------------------------------------------------------------------------------------------
// Plain helpers for computing answers from the sandbox's data.

type Rec = Record<string, unknown>;
type Row = Record<string, unknown>;

const recs = (s: State, r: StoredResource): Rec[] => [...s[r].values()] as Rec[];
/** Text order as SQLite's BINARY collation sees it (the ids and dates are ASCII). */
const cmp = (a: unknown, b: unknown): number => {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  return (a as string | number) < (b as string | number) ? -1 : 1;
};
/** Rows in a stable order, for answers whose order the comparison does not care about. */
const sorted = (rows: Row[]): Row[] => [...rows].sort((a, b) => cmp(JSON.stringify(a), JSON.stringify(b)));
function countBy<T>(items: Iterable<T>, key: (x: T) => string): Map<string, number> {
  const m = new Map<string, number>();
  for (const x of items) m.set(key(x), (m.get(key(x)) ?? 0) + 1);
  return m;
}

/** Exact cents of a decimal amount ("1234.5", "1234.50", "-3.07"): integer arithmetic on the text. */
function cents(amount: unknown): number {
  const m = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(String(amount));
  if (!m) throw new Error(`not a decimal amount with at most 2 decimals: ${String(amount)}`);
  const v = Number(m[2]) * 100 + Number((m[3] ?? "").padEnd(2, "0"));
  if (!Number.isSafeInteger(v)) throw new Error(`amount too large: ${String(amount)}`);
  return m[1] ? -v : v;
}
/** `printf('%d.%02d', c / 100, c % 100)` for a non-negative number of cents. */
const decimal = (c: number): string => `${Math.floor(c / 100)}.${String(c % 100).padStart(2, "0")}`;


// ---------------------------------------------------------------------------------------------
// The world: a sandbox, two runs around one simulated day, the data captured after each.

interface World {
  t: TempStore;
  run1: number;
  run2: number;
  /** The snapshot's expected content after each run (children split out, SSNs masked). */
  s1: State;
  s2: State;
  /** When each run began, bracketed by the clock before and after it. */
  began: Map<number, { after: string; before: string }>;
}

/** A member's active, open coverage with claims on at least two service dates, and the first of them. */
function backdatedTermination(members: Rec[], claims: Rec[]) {
  for (const m of [...members].sort((a, b) => cmp(a.id, b.id))) {
    for (const c of (m.coverages as Rec[] | undefined) ?? []) {
      if (c.status !== "active" || c.endDate != null) continue;
      const dates = [...new Set(claims.filter((x) => x.coverageId === c.id).map((x) => x.serviceDateFrom as string))].sort();
      if (dates.length >= 2 && dates[0]! >= (c.startDate as string)) {
        return { groupPolicyId: c.groupPolicyId as string, memberId: m.id as string, coverageId: c.id as string, terminationDate: dates[0]! };
      }
    }
  }
  throw new Error("no member with claims on two dates of an open coverage");
}

let world: World;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  const { sb, client, t, cleanup } = await guideWorld();
  cleanups.push(cleanup);
  const began = new Map<number, { after: string; before: string }>();
  const run = async () => {
    const after = new Date().toISOString();
    const r = await syncStarted({ source: client, store: t.store, claimsWindow: ALL_CLAIMS });
    expect(r.status).toBe("succeeded");
    began.set(r.runId, { after, before: new Date().toISOString() });
    return r.runId;
  };
  const run1 = await run();
  const s1 = expectedState(sandboxData(sb), TEST_PII_KEY);
  await sb.advance();
  // Through the API, a coverage terminated back to the date of its member's first claim on it:
  // the member's later claims now fall after the coverage's end.
  const day = sandboxData(sb);
  const target = backdatedTermination(day.members, day.claims);
  await client.terminate(target.groupPolicyId, { memberId: target.memberId, coverageId: target.coverageId, terminationDate: target.terminationDate });
  const run2 = await run();
  const s2 = expectedState(sandboxData(sb), TEST_PII_KEY);
  world = { t, run1, run2, s1, s2, began };
});

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** Run a README question as written, with its named parameters. */
function ask(name: string, params?: Record<string, unknown>): Row[] {
  const stmt = world.t.db.prepare(questions.get(name)!);
  return (params ? stmt.all(params) : stmt.all()) as Row[];
}

// ---------------------------------------------------------------------------------------------
// One check per question: the README's answer equals the one the sandbox's data gives.

const checks: Record<string, () => void> = {
  "members-per-group"() {
    const { s2 } = world;
    const groupByNumber = new Map(recs(s2, "groups").map((g) => [g.groupId as string, g]));
    const members = new Map<string, Set<string>>();
    const active = new Map<string, Set<string>>();
    for (const c of recs(s2, "coverages")) {
      const g = c.groupId as string;
      if (!members.has(g)) {
        members.set(g, new Set());
        active.set(g, new Set());
      }
      members.get(g)!.add(c.memberId as string);
      if (c.status === "active") active.get(g)!.add(c.memberId as string);
    }
    const expected = [...members]
      .filter(([g]) => groupByNumber.has(g))
      .map(([g, ms]) => ({ groupId: g, sponsorName: groupByNumber.get(g)!.sponsorName, members: ms.size, active_members: active.get(g)!.size }));
    expect(expected.length).toBeGreaterThan(1);
    expect(expected.some((r) => r.active_members > 0 && r.active_members < r.members)).toBe(true);
    expect(sorted(ask("members-per-group"))).toEqual(sorted(expected));
  },

  "field-changes-in-run"() {
    const { s1, s2, run1, run2 } = world;
    const expected: Row[] = [];
    for (const r of Object.keys(s2) as StoredResource[]) {
      for (const [id, after] of s2[r]) {
        const before = s1[r].get(id);
        if (before === undefined) continue;
        for (const field of changedFields(before, after)) {
          expected.push({ resource: r, id, field, old_value: atPath(before, field), new_value: atPath(after, field) });
        }
      }
    }
    expect(expected.length).toBeGreaterThan(5);
    // Several kinds of change: a coverage terminated, a claim adjudicated, a member's details.
    expect(new Set(expected.map((x) => x.resource)).size).toBeGreaterThan(1);
    expect(sorted(ask("field-changes-in-run", { run_id: run2 }))).toEqual(sorted(expected));
    // The first run inserted everything: no field changed.
    expect(ask("field-changes-in-run", { run_id: run1 })).toEqual([]);
  },

  "changes-in-run"() {
    const { s1, s2, run1, run2 } = world;
    const empty = Object.fromEntries((Object.keys(s1) as StoredResource[]).map((r) => [r, new Map()])) as State;
    const tally = (lines: string[]): Row[] =>
      [...countBy(lines, (l) => l.split(" ").slice(0, 2).join(" "))].map(([k, n]) => {
        const [resource, op] = k.split(" ");
        return { resource, op, records: n };
      });
    const second = tally(diffStates(s1, s2));
    expect(second.some((x) => x.op === "update")).toBe(true);
    expect(second.some((x) => x.op === "insert")).toBe(true);
    expect(second.some((x) => x.op === "delete")).toBe(true);
    expect(sorted(ask("changes-in-run", { run_id: run2 }))).toEqual(sorted(second));
    expect(sorted(ask("changes-in-run", { run_id: run1 }))).toEqual(sorted(tally(diffStates(empty, s1))));
  },

  "paid-per-group-per-month"() {
    const totals = new Map<string, { groupId: string; month: string; paid_claims: number; paid_cents: number }>();
    for (const c of recs(world.s2, "claims")) {
      if (c.claimStatus !== "paid") continue;
      const month = (c.serviceDateFrom as string).slice(0, 7);
      const k = `${String(c.groupId)} ${month}`;
      const row = totals.get(k) ?? { groupId: c.groupId as string, month, paid_claims: 0, paid_cents: 0 };
      row.paid_claims++;
      row.paid_cents += cents(c.paidAmount);
      totals.set(k, row);
    }
    const expected = [...totals.values()].map((r) => ({ ...r, paid: decimal(r.paid_cents) }));
    expect(expected.length).toBeGreaterThan(3);
    expect(expected.every((r) => r.paid_cents > 0)).toBe(true);
    expect(sorted(ask("paid-per-group-per-month"))).toEqual(sorted(expected));
  },

  "claims-outside-coverage"() {
    const { s2 } = world;
    const expected: Row[] = [];
    for (const cl of recs(s2, "claims")) {
      const co = s2.coverages.get(String(cl.coverageId)) as Rec | undefined;
      const from = cl.serviceDateFrom as string;
      let problem: string | undefined;
      if (co === undefined) problem = "no current coverage";
      else if (from < (co.startDate as string)) problem = "before the coverage starts";
      else if (co.endDate != null && from > (co.endDate as string)) problem = "after the coverage ends";
      if (problem === undefined) continue;
      expected.push({
        id: cl.id,
        claimNumber: cl.claimNumber,
        memberId: cl.memberId,
        coverageId: cl.coverageId,
        serviceDateFrom: from,
        startDate: co?.startDate ?? null,
        endDate: co?.endDate ?? null,
        problem,
      });
    }
    // Claims of members deleted by the simulated day keep pointing at their gone coverage; the
    // back-dated termination leaves claims after the coverage's end. (The sandbox never serves a
    // claim before its coverage's start: that branch is computed here but has no rows.)
    expect(expected.some((r) => r.problem === "no current coverage")).toBe(true);
    expect(expected.some((r) => r.problem === "after the coverage ends")).toBe(true);
    expect(sorted(ask("claims-outside-coverage"))).toEqual(sorted(expected));
  },

  "members-as-of-run"() {
    const { s1, s2, run1, run2 } = world;
    const rows = (s: State): Row[] =>
      recs(s, "members").map((m) => ({
        id: m.id,
        subscriberId: m.subscriberId ?? null,
        firstName: m.firstName ?? null,
        lastName: m.lastName ?? null,
        relationship: m.relationship ?? null,
        address_state: atPath(m, "address.state"),
      }));
    const asOf1 = rows(s1);
    const asOf2 = rows(s2);
    expect(asOf1.length).toBeGreaterThan(100);
    // The day changed who the members are, so the two answers differ.
    expect(sorted(asOf1)).not.toEqual(sorted(asOf2));
    expect(sorted(ask("members-as-of-run", { run_id: run1 }))).toEqual(sorted(asOf1));
    expect(sorted(ask("members-as-of-run", { run_id: run2 }))).toEqual(sorted(asOf2));
  },

  "claims-of-member"() {
    const claims = recs(world.s2, "claims");
    const perMember = countBy(claims, (c) => String(c.memberId));
    // A member with several claims (the one with the most, the smallest id among ties).
    const [memberId, n] = [...perMember].sort((a, b) => b[1] - a[1] || cmp(a[0], b[0]))[0]!;
    expect(n).toBeGreaterThanOrEqual(2);
    const expected = claims
      .filter((c) => c.memberId === memberId)
      .map((c) => ({
        id: c.id,
        claimNumber: c.claimNumber,
        serviceDateFrom: c.serviceDateFrom,
        claimStatus: c.claimStatus,
        claimAmount: c.claimAmount ?? null,
        paidAmount: c.paidAmount ?? null,
      }));
    expect(sorted(ask("claims-of-member", { member_id: memberId }))).toEqual(sorted(expected));
    expect(ask("claims-of-member", { member_id: "no-such-member" })).toEqual([]);
  },

  "claim-history"() {
    const { s1, s2, run1, run2, began } = world;
    // A claim the simulated day changed (adjudicated), so its history has two versions.
    const id = [...s2.claims.keys()].sort(cmp).find((k) => s1.claims.has(k) && changedFields(s1.claims.get(k), s2.claims.get(k)).length > 0);
    expect(id).toBeDefined();
    const version = (c: Rec, from: number, to: number | null): Row => ({
      valid_from_run: from,
      valid_to_run: to,
      claimStatus: c.claimStatus,
      allowedAmount: c.allowedAmount ?? null,
      paidAmount: c.paidAmount ?? null,
      processing_adjudicatedDate: atPath(c, "processing.adjudicatedDate"),
    });
    const expected = [version(s1.claims.get(id!) as Rec, run1, run2), version(s2.claims.get(id!) as Rec, run2, null)];
    const got = ask("claim-history", { claim_id: id });
    // When each version was observed: when its run began.
    for (const row of got) {
      const b = began.get(row.valid_from_run as number);
      expect(b).toBeDefined();
      const at = row.observed_at as string;
      expect(typeof at).toBe("string");
      expect(at >= b!.after && at <= b!.before, `${at} within ${b!.after}..${b!.before}`).toBe(true);
    }
    expect(got.map(({ observed_at: _o, ...rest }) => rest)).toEqual(expected);
  },

  "top-members-by-claims"() {
    const { s2 } = world;
    const perMember = countBy(
      recs(s2, "claims").filter((c) => s2.members.has(String(c.memberId))),
      (c) => String(c.memberId),
    );
    const expected = [...perMember]
      .sort((a, b) => b[1] - a[1] || cmp(a[0], b[0]))
      .slice(0, 5)
      .map(([id, n]) => {
        const m = s2.members.get(id) as Rec;
        return { id, firstName: m.firstName ?? null, lastName: m.lastName ?? null, claims: n };
      });
    expect(expected).toHaveLength(5);
    // The order is the answer: compared as is.
    expect(ask("top-members-by-claims")).toEqual(expected);
  },

  "coverages-by-status"() {
    const byStatus = new Map<string, { n: number; members: Set<string> }>();
    for (const c of recs(world.s2, "coverages")) {
      const s = byStatus.get(c.status as string) ?? { n: 0, members: new Set<string>() };
      s.n++;
      s.members.add(c.memberId as string);
      byStatus.set(c.status as string, s);
    }
    const expected = [...byStatus].map(([status, s]) => ({ status, coverages: s.n, members: s.members.size }));
    expect(expected.length).toBeGreaterThan(1);
    expect(sorted(ask("coverages-by-status"))).toEqual(sorted(expected));
  },

  "claim-lines-by-procedure"() {
    const byCode = new Map<string, { lines: number; claims: Set<string>; amount_cents: number }>();
    for (const c of recs(world.s2, "claims")) {
      for (const line of (c.lines as Rec[] | undefined) ?? []) {
        const s = byCode.get(line.code as string) ?? { lines: 0, claims: new Set<string>(), amount_cents: 0 };
        s.lines++;
        s.claims.add(c.id as string);
        s.amount_cents += cents(line.amount);
        byCode.set(line.code as string, s);
      }
    }
    const expected = [...byCode].map(([code, s]) => ({ code, lines: s.lines, claims: s.claims.size, amount_cents: s.amount_cents, amount: decimal(s.amount_cents) }));
    expect(expected.length).toBeGreaterThan(3);
    expect(expected.some((r) => r.lines > r.claims)).toBe(true);
    expect(sorted(ask("claim-lines-by-procedure"))).toEqual(sorted(expected));
  },

  "members-in-several-groups"() {
    const { s2 } = world;
    const groups = new Map<string, Set<string>>();
    for (const c of recs(s2, "coverages")) {
      const m = c.memberId as string;
      if (!groups.has(m)) groups.set(m, new Set());
      groups.get(m)!.add(c.groupId as string);
    }
    const expected = [...groups]
      .filter(([m, gs]) => gs.size > 1 && s2.members.has(m))
      .map(([m, gs]) => {
        const rec = s2.members.get(m) as Rec;
        return { memberId: m, firstName: rec.firstName ?? null, lastName: rec.lastName ?? null, groups: gs.size };
      });
    // A few households are covered in two groups: their sponsor's policy of last year and the renewed one.
    expect(expected.length).toBeGreaterThan(0);
    expect(sorted(ask("members-in-several-groups"))).toEqual(sorted(expected));
  },

  "last-run-by-resource"() {
    const { s1, s2 } = world;
    const lines = diffStates(s1, s2);
    const n = (r: string, op: string) => lines.filter((l) => l.startsWith(`${r} ${op} `)).length;
    const expected = (Object.keys(s2) as StoredResource[])
      .map((r) => {
        const seen = s2[r].size;
        const [inserted, updated, deleted] = [n(r, "insert"), n(r, "update"), n(r, "delete")];
        return { resource: r, seen, inserted, updated, deleted, unchanged: seen - inserted - updated, quarantined: 0 };
      })
      .filter((x) => x.seen + x.deleted > 0);
    expect(expected.reduce((a, x) => a + x.updated, 0)).toBeGreaterThan(0);
    expect(sorted(ask("last-run-by-resource"))).toEqual(sorted(expected));
  },
};

// ---------------------------------------------------------------------------------------------

describe("the analyst's guide: every README question answers what the sandbox's data says", () => {
  it("the README has at least ten questions, each with a check here, and each check has its question", () => {
    expect(questions.size).toBeGreaterThanOrEqual(10);
    expect([...questions.keys()].sort()).toEqual(Object.keys(checks).sort());
  });

  it("every question uses the documented views only, never the sync's tables or JSON functions", () => {
    for (const [name, sql] of questions) {
      expect({ name, internal: /(^|[^\w])_[a-z]/i.test(sql.replace(/'[^']*'/g, "''").replace(/--.*$/gm, "")) }).toEqual({ name, internal: false });
      expect({ name, json: /json_/i.test(sql) }).toEqual({ name, json: false });
    }
  });

  it.each([...questions.keys()])("%s", (name) => {
    const check = checks[name];
    expect(check, `no check for the README question ${name}`).toBeDefined();
    check!();
  });
});
