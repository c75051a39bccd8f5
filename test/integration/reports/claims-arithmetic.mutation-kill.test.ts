/**
 * Reconcile's claims figures on a history small enough to add up by hand: two runs of an in-memory
 * source (a claim paid, one removed, one new), every figure written out here. Then one corrupt
 * version that adds a claim at A with no amounts: the count no longer adds up while every amount
 * still does, so "the arithmetic holds" must need the count and the amounts, not either.
 */
import type { Database } from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { reconcile } from "../../../src/reports/reconcile.js";
import { copyVersionRow } from "../../helpers/hand-run.js";
import { memorySource, type MemoryData } from "../../helpers/memory-source.js";
import { syncStarted, useTempStores } from "../../helpers/temp-store.js";

const window = { from: "2026-01-01", to: "2026-03-31" };
const claim = (id: string, status: string | null, billed: string, allowed: string, paid: string, groupId = "G1") => ({
  id, groupId, memberId: "m1", serviceDateFrom: "2026-02-01", claimStatus: status, claimAmount: billed, allowedAmount: allowed, paidAmount: paid,
});
const data = (claims: Record<string, unknown>[]): MemoryData => ({
  designs: [{ id: "d1", name: "Gold", planType: "PPO" }],
  groups: [
    { id: "gp1", groupId: "G1", sponsorName: "Acme", plans: [{ id: "p1", name: "Gold", basePlanDesignId: "d1" }] },
    { id: "gp2", groupId: "G2", sponsorName: "Zeta", plans: [] },
  ],
  members: [{ id: "m1", firstName: "Ana", lastName: "Li", coverages: [{ id: "c1", groupId: "G1", planId: "p1", status: "active", startDate: "2026-01-01", endDate: null }] }],
  claims,
});

/** Insert a copy of claim `id`'s version at run 1, with the columns in `set` (SQL values) replaced. */
function copyVersion(db: Database, id: string, set: Record<string, string>): void {
  const vid = db.prepare("SELECT vid FROM _claims_v WHERE id = ? AND valid_from_run = 1").pluck().get(id) as number | undefined;
  expect(vid).toBeDefined();
  copyVersionRow(db, "claims", vid!, set);
}

describe("reconcile's claims arithmetic", () => {
  const setup = useTempStores();
  let out = "";
  afterEach(() => rmSync(out, { recursive: true, force: true }));

  async function history() {
    const t = setup();
    out = mkdtempSync(join(tmpdir(), "bsync-claims-"));
    const k4 = claim("k4", null, "30.00", "20.00", "5.00", "G2"); // no status, unchanged
    let d = data([claim("k1", "pending", "100.00", "90.00", "0.00"), claim("k2", "pending", "200.00", "150.00", "10.00"), k4]);
    const source = memorySource(() => d);
    await syncStarted({ source, store: t.store, claimsWindow: window });
    d = data([claim("k1", "paid", "100.00", "90.00", "90.00"), claim("k3", "pending", "50.00", "40.00", "25.00"), k4]);
    const r2 = await syncStarted({ source, store: t.store, claimsWindow: window });
    expect(r2.status).toBe("succeeded");
    return t;
  }

  it("adds up, figure by figure", async () => {
    const t = await history();
    const r = reconcile(t.db, { from: "1", to: "2", outDir: join(out, "ok") });
    const none = { count: 0, billed: "0.00", allowed: "0.00", paid: "0.00" };
    const k4At = { count: 1, billed: "30.00", allowed: "20.00", paid: "5.00" };
    expect(r.claims.from).toEqual({ count: 3, billed: "330.00", allowed: "260.00", paid: "15.00" });
    expect(r.claims.to).toEqual({ count: 3, billed: "180.00", allowed: "150.00", paid: "120.00" });
    expect(r.claims.byStatus).toEqual([
      { status: "(none)", from: k4At, to: k4At },
      { status: "paid", from: none, to: { count: 1, billed: "100.00", allowed: "90.00", paid: "90.00" } },
      { status: "pending", from: { count: 2, billed: "300.00", allowed: "240.00", paid: "10.00" }, to: { count: 1, billed: "50.00", allowed: "40.00", paid: "25.00" } },
    ]);
    expect(r.claims.byGroup).toEqual([
      { groupId: "G1", status: "paid", from: none, to: { count: 1, billed: "100.00", allowed: "90.00", paid: "90.00" } },
      { groupId: "G1", status: "pending", from: { count: 2, billed: "300.00", allowed: "240.00", paid: "10.00" }, to: { count: 1, billed: "50.00", allowed: "40.00", paid: "25.00" } },
      { groupId: "G2", status: "(none)", from: k4At, to: k4At },
    ]);
    expect(r.claims.transitions).toEqual([
      { from: "(new)", to: "pending", count: 1, paidChange: "25.00" },
      { from: "pending", to: "(removed)", count: 1, paidChange: "-10.00" },
      { from: "pending", to: "paid", count: 1, paidChange: "90.00" },
    ]);
    expect(r.claims.paidMovement).toEqual({ newClaims: "25.00", removedClaims: "-10.00", changedClaims: "90.00", total: "105.00" });
    expect(r.claims.arithmetic).toEqual([
      { status: "(none)", holds: true },
      { status: "paid", holds: true },
      { status: "pending", holds: true },
    ]);
    expect(r.claims.holds).toBe(true);
    expect(r.arithmeticHolds).toBe(true);
  });

  it("a claim counted at A with no amounts (a corrupt version outside every move) breaks the count alone: the arithmetic does not hold", async () => {
    const t = await history();
    // A copy of k2's version at A under a new id, with no amounts, that ends at run 2 without a
    // delete: counted at A, never at B, in no move. Every amount still adds up; pending's count is one too many at A.
    // The cents columns are computed from the amount columns.
    copyVersion(t.db, "k2", { id: "'k9'", valid_to_run: "2", hash: "'corrupt'", claimAmount: "NULL", allowedAmount: "NULL", paidAmount: "NULL", ended_by: "NULL" });
    const r = reconcile(t.db, { from: "1", to: "2", outDir: join(out, "broken") });
    expect(r.claims.from).toEqual({ count: 4, billed: "330.00", allowed: "260.00", paid: "15.00" });
    expect(r.claims.to).toEqual({ count: 3, billed: "180.00", allowed: "150.00", paid: "120.00" });
    expect(r.claims.paidMovement.total).toBe("105.00");
    expect(r.claims.arithmetic).toEqual([
      { status: "(none)", holds: true },
      { status: "paid", holds: true },
      { status: "pending", holds: false },
    ]);
    expect(r.claims.holds).toBe(false);
    expect(r.arithmeticHolds).toBe(false);
  });

  it("a claim whose amount changed with no change recorded (a new version, the same hash) breaks the amounts while the count adds up", async () => {
    const t = await history();
    // k4 (no status, billed 30.00 at A) gets a version from run 2 billed 99.00 that no move explains.
    t.db.prepare("UPDATE _claims_v SET valid_to_run = 2, ended_by = 'update' WHERE id = 'k4'").run();
    copyVersion(t.db, "k4", { valid_from_run: "2", valid_to_run: "NULL", ended_by: "NULL", claimAmount: "'99.00'" });
    const r = reconcile(t.db, { from: "1", to: "2", outDir: join(out, "broken") });
    expect(r.claims.to).toEqual({ count: 3, billed: "249.00", allowed: "150.00", paid: "120.00" });
    expect(r.claims.arithmetic).toEqual([
      { status: "(none)", holds: false },
      { status: "paid", holds: true },
      { status: "pending", holds: true },
    ]);
    expect(r.claims.holds).toBe(false);
  });

  it("a group whose only claim came and went between A and B has no row by group (nothing at either end)", async () => {
    const t = setup();
    out = mkdtempSync(join(tmpdir(), "bsync-claims-"));
    const k1 = claim("k1", "pending", "100.00", "90.00", "0.00");
    let d = data([k1]);
    const source = memorySource(() => d);
    await syncStarted({ source, store: t.store, claimsWindow: window });
    d = data([k1, claim("k5", "pending", "70.00", "60.00", "0.00", "G2")]);
    await syncStarted({ source, store: t.store, claimsWindow: window });
    d = data([k1]);
    expect((await syncStarted({ source, store: t.store, claimsWindow: window })).status).toBe("succeeded");
    const r = reconcile(t.db, { from: "1", to: "3", outDir: join(out, "ok") });
    const k1At = { count: 1, billed: "100.00", allowed: "90.00", paid: "0.00" };
    expect(r.claims.byGroup).toEqual([{ groupId: "G1", status: "pending", from: k1At, to: k1At }]);
    expect(r.claims.holds).toBe(true);
  });

  it("a claim without a status moves as (none), both ways; one stored without a group is reported under the group \"\"", async () => {
    const t = setup();
    out = mkdtempSync(join(tmpdir(), "bsync-claims-"));
    let d = data([claim("k1", null, "10.00", "10.00", "0.00"), claim("k2", "pending", "20.00", "20.00", "0.00")]);
    const source = memorySource(() => d);
    await syncStarted({ source, store: t.store, claimsWindow: window });
    d = data([claim("k1", "paid", "10.00", "10.00", "10.00"), claim("k2", null, "20.00", "20.00", "5.00")]);
    expect((await syncStarted({ source, store: t.store, claimsWindow: window })).status).toBe("succeeded");
    t.db.prepare("UPDATE _claims_v SET groupId = NULL WHERE id = 'k2'").run();
    const r = reconcile(t.db, { from: "1", to: "2", outDir: join(out, "ok") });
    expect(r.claims.transitions).toEqual([
      { from: "(none)", to: "paid", count: 1, paidChange: "10.00" },
      { from: "pending", to: "(none)", count: 1, paidChange: "5.00" },
    ]);
    const none = { count: 0, billed: "0.00", allowed: "0.00", paid: "0.00" };
    const one = (amount: string, paid: string) => ({ count: 1, billed: amount, allowed: amount, paid });
    expect(r.claims.byGroup).toEqual([
      { groupId: "", status: "(none)", from: none, to: one("20.00", "5.00") },
      { groupId: "", status: "pending", from: one("20.00", "0.00"), to: none },
      { groupId: "G1", status: "(none)", from: one("10.00", "0.00"), to: none },
      { groupId: "G1", status: "paid", from: none, to: one("10.00", "10.00") },
    ]);
    expect(r.claims.holds).toBe(true);
  });
});
