/**
 * The reconciliation report against the sandbox's ground truth: a sandbox with planted
 * inconsistencies is synced (run 1), moved three simulated days (new hires, terminations,
 * reinstatements, plan changes, deletions, claims filed, adjudicated and voided), synced again
 * (run 2). Every figure of `reconcile 1 → 2` is recomputed here from what the sandbox served at
 * each run, independently of the report's SQL: members, coverages by cell, movement and each
 * eligibility row's type and effective date, the 030 audit, claims by status to the cent, status
 * transitions, and each consistency check's findings.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitCode } from "../../../src/cli/exit-codes.js";
import { CheckNames, type CheckName } from "../../../src/reports/check-names.js";
import { canonicalJson, startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { ALL_CLAIMS, sandboxData } from "../../helpers/sandbox-truth.js";
import type { MemoryData } from "../../helpers/memory-source.js";
import { runCli } from "../../unit/cli/run-cli.js";
import { csvObjects } from "../../unit/sinks/fixtures.js";

type Rec = Record<string, unknown>;
let sb: Sandbox;
let dir: string;
let env: Record<string, string>;
let truthA: MemoryData;
let truthB: MemoryData;
let runBDate: string;
const window = ["--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to];

beforeAll(async () => {
  sb = await startSandbox({ members: 3000, seed: 23, inconsistencies: true });
  dir = mkdtempSync(join(tmpdir(), "bsync-reconcile-"));
  env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(dir, "snap.db"), BENEFITS_PII_KEY: "reconcile-test-pii-key-0123456789" };
  expect((await runCli(["sync", ...window, "--quiet"], { env, cwd: dir })).code).toBe(ExitCode.OK);
  truthA = sandboxData(sb);
  for (let d = 0; d < 3; d++) await sb.advance();
  expect((await runCli(["sync", ...window, "--quiet"], { env, cwd: dir })).code).toBe(ExitCode.OK);
  truthB = sandboxData(sb);
  runBDate = new Date().toISOString().slice(0, 10);
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const csv = (path: string): Rec[] => csvObjects(path);
/** Decimal text to integer cents, by hand: the oracle shares no code with the report. */
const cents = (v: unknown): bigint => {
  if (v === null || v === undefined) return 0n;
  const [whole, frac = ""] = String(v).split(".");
  return BigInt(whole!) * 100n + BigInt(frac.padEnd(2, "0"));
};
const dec = (c: bigint): string => `${c < 0n ? "-" : ""}${(c < 0n ? -c : c) / 100n}.${String((c < 0n ? -c : c) % 100n).padStart(2, "0")}`;

function coverages(t: MemoryData): Map<string, Rec> {
  const out = new Map<string, Rec>();
  for (const m of t.members) for (const c of (m.coverages as Rec[]) ?? []) out.set(String(c.id), { ...c, memberId: m.id });
  return out;
}
const withoutCoverages = (m: Rec): string => canonicalJson({ ...m, coverages: undefined });

/** The consistency checks, restated over the served records. */
function expectedFindings(t: MemoryData, asOf: string): Record<CheckName, string[]> {
  const out = Object.fromEntries(CheckNames.map((c) => [c, [] as string[]])) as Record<CheckName, string[]>;
  const covs = [...coverages(t).values()];
  const ofMember = new Map<unknown, Rec[]>();
  for (const k of covs) ofMember.set(k.memberId, [...(ofMember.get(k.memberId) ?? []), k]);
  const plansOf = new Map(t.groups.map((g) => [String(g.id), new Set(((g.plans as Rec[]) ?? []).map((p) => String(p.id)))]));
  const groupOf = new Map(t.groups.map((g) => [String(g.id), g]));
  for (const c of t.claims) {
    const mine = (ofMember.get(c.memberId) ?? []).filter((k) => k.groupId === c.groupId);
    const to = String(c.serviceDateTo ?? c.serviceDateFrom);
    if (mine.length === 0) out.claim_member_not_covered_in_group.push(String(c.id));
    else if (!mine.some((k) => String(k.startDate) <= String(c.serviceDateFrom) && (k.endDate === null || String(k.endDate) >= to))) out.claim_outside_coverage.push(String(c.id));
  }
  for (const k of covs) {
    if (!plansOf.get(String(k.groupPolicyId))?.has(String(k.planId))) out.coverage_plan_not_in_group.push(String(k.id));
    const g = groupOf.get(String(k.groupPolicyId));
    const end = g?.terminationDate as string | null | undefined;
    if (g && k.status !== "terminated" && end && end < asOf && (k.endDate === null || String(k.endDate) > end)) out.member_of_terminated_group.push(String(k.id));
  }
  for (const x of covs)
    for (const y of ofMember.get(x.memberId) ?? []) {
      if (x.memberId !== y.memberId || x.planId !== y.planId || String(x.id) >= String(y.id)) continue;
      const overlap = String(x.startDate) <= String(y.endDate ?? "9999-12-31") && String(y.startDate) <= String(x.endDate ?? "9999-12-31");
      if (overlap) out.overlapping_coverages.push(`${x.id}+${y.id}`);
    }
  for (const c of CheckNames) out[c].sort();
  return out;
}

function findingsIn(path: string): Record<CheckName, string[]> {
  const out = Object.fromEntries(CheckNames.map((c) => [c, [] as string[]])) as Record<CheckName, string[]>;
  for (const r of csv(path)) out[r.check as CheckName].push(String(r.record_id));
  for (const c of CheckNames) out[c].sort();
  return out;
}

describe("reconcile against the sandbox's ground truth", () => {
  it("members, coverages, movement and both eligibility files equal what the sandbox served", async () => {
    const res = await runCli(["reconcile", "--from", "1", "--to", "2", "--out", "rep", "--as-of", sb.today, "--json"], { env, cwd: dir });
    expect(res.stderr).toBe("");
    expect(res.code).toBe(ExitCode.OK);
    const json = JSON.parse(res.stdout.trim().split("\n").pop()!) as Rec & { members: Rec; coverages: { movement: Rec; byStatus: Rec[] } };
    const mA = new Map(truthA.members.map((m) => [String(m.id), m]));
    const mB = new Map(truthB.members.map((m) => [String(m.id), m]));
    const changedMembers = new Set([...mB.keys()].filter((id) => mA.has(id) && withoutCoverages(mA.get(id)!) !== withoutCoverages(mB.get(id)!)));
    expect(json.members).toEqual({
      from: mA.size,
      to: mB.size,
      added: [...mB.keys()].filter((id) => !mA.has(id)).length,
      deleted: [...mA.keys()].filter((id) => !mB.has(id)).length,
      changed: changedMembers.size,
      holds: true,
    });
    expect(json.arithmeticHolds).toBe(true);

    // Coverages by (group policy, plan, status), at each end.
    const cA = coverages(truthA);
    const cB = coverages(truthB);
    const countCells = (cs: Map<string, Rec>) => {
      const m = new Map<string, number>();
      for (const c of cs.values()) {
        const k = [c.groupPolicyId, c.planId, c.status].join(" ");
        m.set(k, (m.get(k) ?? 0) + 1);
      }
      return m;
    };
    const cellsA = countCells(cA);
    const cellsB = countCells(cB);
    const cellRows = csv(join(dir, "rep", "membership.csv"));
    for (const r of cellRows) {
      const k = [r.group_policy_id, r.plan_id, r.status].join(" ");
      expect([k, Number(r.at_from), Number(r.at_to), r.adds_up]).toEqual([k, cellsA.get(k) ?? 0, cellsB.get(k) ?? 0, "yes"]);
    }
    expect(new Set(cellRows.map((r) => [r.group_policy_id, r.plan_id, r.status].join(" ")))).toEqual(new Set([...cellsA.keys(), ...cellsB.keys()]));

    // Each coverage that moved, with its maintenance type and effective date.
    const expected: string[] = [];
    const movement = { addition: 0, termination: 0, reinstatement: 0, change: 0, deletion: 0 };
    for (const id of new Set([...cA.keys(), ...cB.keys()])) {
      const a = cA.get(id);
      const b = cB.get(id);
      let row: [string, string, unknown] | undefined;
      if (!a) row = ["021", "addition", b!.startDate];
      else if (!b) row = ["024", "deletion", a.endDate ?? runBDate];
      else if (canonicalJson(a) !== canonicalJson(b)) {
        if (a.status !== "terminated" && b.status === "terminated") row = ["024", "termination", b.endDate ?? runBDate];
        else if (a.status === "terminated" && b.status !== "terminated") row = ["025", "reinstatement", b.startDate];
        else row = ["001", "change", runBDate];
      } else if (changedMembers.has(String(a.memberId))) row = ["001", "change", runBDate];
      if (!row) continue;
      movement[row[1] as keyof typeof movement]++;
      expected.push(`${row[0]} ${row[1]} ${id} ${String(row[2])}`);
    }
    const rows = csv(join(dir, "rep", "eligibility-changes.csv"));
    expect(rows.map((r) => `${r.maintenance_type} ${r.maintenance} ${r.coverage_id} ${r.effective_date}`).sort()).toEqual(expected.sort());
    expect(json.coverages.movement).toEqual(movement);
    for (const k of ["addition", "termination", "reinstatement", "change", "deletion"] as const) expect(movement[k], k).toBeGreaterThan(0);

    const audit = csv(join(dir, "rep", "eligibility-audit.csv"));
    expect(audit.every((r) => r.maintenance_type === "030")).toBe(true);
    expect(audit.map((r) => `${r.coverage_id} ${r.member_id} ${r.status_to} ${r.start_date} ${r.end_date}`).sort()).toEqual(
      [...cB.values()].map((c) => `${c.id} ${c.memberId} ${c.status} ${c.startDate} ${c.endDate ?? ""}`).sort(),
    );
  });

  it("claims by status and group, transitions and paid movement equal the served claims, to the cent", () => {
    const json = JSON.parse(readFileSync(join(dir, "rep", "report.json"), "utf8")) as { claims: Rec & { byStatus: Rec[]; transitions: Rec[]; paidMovement: Rec; from: Rec; to: Rec } };
    const totals = (cs: Rec[]) => {
      const by = new Map<string, { count: number; billed: bigint; allowed: bigint; paid: bigint }>();
      for (const c of cs) {
        for (const k of [String(c.claimStatus), "*", `${c.groupId} ${c.claimStatus}`]) {
          const t = by.get(k) ?? { count: 0, billed: 0n, allowed: 0n, paid: 0n };
          t.count++;
          t.billed += cents(c.claimAmount);
          t.allowed += cents(c.allowedAmount);
          t.paid += cents(c.paidAmount);
          by.set(k, t);
        }
      }
      return by;
    };
    const shown = (t: { count: number; billed: bigint; allowed: bigint; paid: bigint } | undefined) =>
      t ? { count: t.count, billed: dec(t.billed), allowed: dec(t.allowed), paid: dec(t.paid) } : { count: 0, billed: "0.00", allowed: "0.00", paid: "0.00" };
    const tA = totals(truthA.claims);
    const tB = totals(truthB.claims);
    expect(json.claims.from).toEqual(shown(tA.get("*")));
    expect(json.claims.to).toEqual(shown(tB.get("*")));
    for (const s of json.claims.byStatus) expect(s).toEqual({ status: s.status, from: shown(tA.get(String(s.status))), to: shown(tB.get(String(s.status))) });
    for (const r of csv(join(dir, "rep", "claims.csv"))) {
      const k = `${r.group_id} ${r.status}`;
      expect([k, Number(r.from_count), r.from_paid, Number(r.to_count), r.to_paid, r.to_billed]).toEqual([k, shown(tA.get(k)).count, shown(tA.get(k)).paid, shown(tB.get(k)).count, shown(tB.get(k)).paid, shown(tB.get(k)).billed]);
    }
    // Transitions: each claim whose served record differs between the runs.
    const byA = new Map(truthA.claims.map((c) => [String(c.id), c]));
    const byB = new Map(truthB.claims.map((c) => [String(c.id), c]));
    const trans = new Map<string, { count: number; paid: bigint }>();
    let total = 0n;
    for (const id of new Set([...byA.keys(), ...byB.keys()])) {
      const a = byA.get(id);
      const b = byB.get(id);
      if (a && b && canonicalJson(a) === canonicalJson(b)) continue;
      const k = `${a ? String(a.claimStatus) : "(new)"} ${b ? String(b.claimStatus) : "(removed)"}`;
      const t = trans.get(k) ?? { count: 0, paid: 0n };
      t.count++;
      t.paid += cents(b?.paidAmount) - cents(a?.paidAmount);
      total += cents(b?.paidAmount) - cents(a?.paidAmount);
      trans.set(k, t);
    }
    expect(Object.fromEntries(json.claims.transitions.map((t) => [`${t.from} ${t.to}`, { count: t.count, paid: t.paidChange }]))).toEqual(
      Object.fromEntries([...trans].map(([k, t]) => [k, { count: t.count, paid: dec(t.paid) }])),
    );
    expect(json.claims.paidMovement.total).toBe(dec(total));
    expect(cents(json.claims.to.paid) - cents(json.claims.from.paid)).toBe(total);
    expect(trans.size).toBeGreaterThan(2);
  });

  it("finds every planted inconsistency and exactly what the checks' rules find in the served data", async () => {
    const found = findingsIn(join(dir, "rep", "findings.csv"));
    expect(found).toEqual(expectedFindings(truthB, sb.today));
    // Run 1 → run 1: no movement; the planted records are all found as of run 1.
    const res = await runCli(["reconcile", "--from", "1", "--to", "1", "--out", "same", "--as-of", sb.today, "--json"], { env, cwd: dir });
    expect(res.code).toBe(ExitCode.OK);
    const json = JSON.parse(res.stdout.trim().split("\n").pop()!) as { coverages: { movement: Record<string, number> }; claims: { transitions: unknown[] } };
    expect(Object.values(json.coverages.movement).every((v) => v === 0)).toBe(true);
    expect(json.claims.transitions).toEqual([]);
    const atA = findingsIn(join(dir, "same", "findings.csv"));
    expect(atA).toEqual(expectedFindings(truthA, sb.today));
    // Before any simulated day the sandbox's data is consistent but for what it planted: exactly those are found.
    expect(atA).toEqual(sb.planted);
    for (const c of CheckNames.filter((x) => x !== "claim_amount_not_decimal")) expect(sb.planted[c].length, c).toBe(1);
  });

  it("writes no SSN into any file of the report", () => {
    const ssns = new Set(truthB.members.map((m) => String(m.ssn)));
    expect(ssns.size).toBeGreaterThan(1000);
    for (const f of readdirSync(join(dir, "rep"))) {
      const text = readFileSync(join(dir, "rep", f), "utf8");
      const hits = (text.match(/\d{3}-\d{2}-\d{4}/g) ?? []).filter((x) => ssns.has(x));
      expect(hits, f).toEqual([]);
    }
  });
});
