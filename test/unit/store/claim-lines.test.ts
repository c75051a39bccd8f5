/**
 * The claim lines table follows its claim versions on every path that writes them: an update (the
 * old version's lines closed, kept for as-of-run questions), a delete, a run that fails and is
 * rolled back, a claim amended within one run (seen twice). Checked against the lines read from
 * each stored version's JSON, and through the `claim_lines` view.
 */
import { afterEach, describe, expect, it } from "vitest";
import { memorySource, type MemoryData } from "../../helpers/memory-source.js";
import { syncStarted, tempStore, type TempStore } from "../../helpers/temp-store.js";
import { sync } from "../../../src/pipeline/sync.js";

const window = { from: "2026-01-01", to: "2026-12-31" };
let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.reverse()) c();
  cleanup = [];
});

const line = (code: string, amount: string) => ({ code, amount });
const claim = (id: string, lines: { code: string; amount: string }[], extra: Record<string, unknown> = {}) => ({
  id,
  claimNumber: `N-${id}`,
  memberId: "m1",
  coverageId: "c-m1",
  groupId: "G1",
  planId: "p1",
  serviceDateFrom: "2026-02-03",
  claimStatus: "paid",
  lines,
  ...extra,
});
const member = { id: "m1", firstName: "Ana", lastName: "Lee", coverages: [{ id: "c-m1", groupId: "G1", planId: "p1", status: "active", startDate: "2026-01-01" }] };
const data = (claims: Record<string, unknown>[]): MemoryData => ({
  designs: [{ id: "d1", name: "Gold" }],
  groups: [{ id: "gp1", groupId: "G1", plans: [{ id: "p1", name: "A" }] }],
  members: [member],
  claims,
});

/** Every version's lines as its JSON has them, with the version's validity. */
function fromJson(t: TempStore): unknown[] {
  const versions = t.db.prepare("SELECT id, data, valid_from_run, valid_to_run FROM claims_history ORDER BY id, valid_from_run").all() as {
    id: string;
    data: string;
    valid_from_run: number;
    valid_to_run: number | null;
  }[];
  return versions.flatMap((v) =>
    ((JSON.parse(v.data) as { lines?: { code: string; amount: string }[] }).lines ?? []).map((l, i) => ({
      claim_id: v.id,
      line_no: i + 1,
      code: l.code,
      amount: l.amount,
      valid_from_run: v.valid_from_run,
      valid_to_run: v.valid_to_run,
    })),
  );
}

function stored(t: TempStore): unknown[] {
  return t.db
    .prepare("SELECT c.id AS claim_id, l.key + 1 AS line_no, l.code, l.amount, l.valid_from_run, l.valid_to_run FROM _claim_lines l JOIN _claims_v c ON c.vid = l.vid ORDER BY claim_id, l.valid_from_run, l.key")
    .all();
}

const current = (t: TempStore) => t.db.prepare("SELECT claim_id, line_no, memberId, code, amount, amount_cents FROM claim_lines ORDER BY claim_id, line_no").all();

describe("claim lines follow their claim versions", () => {
  it("through an update, a delete, and a failed run rolled back", async () => {
    const t = tempStore();
    cleanup.push(t.cleanup);
    let d = data([claim("k1", [line("99213", "10.00"), line("81001", "2.50")]), claim("k2", [line("36415", "3.07")])]);
    await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window });
    d = data([claim("k1", [line("99213", "12.00")])]);
    const second = await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window, deletePolicy: { allowDeletes: true } });
    expect(second.status).toBe("succeeded");
    expect(current(t)).toEqual([{ claim_id: "k1", line_no: 1, memberId: "m1", code: "99213", amount: "12.00", amount_cents: 1200 }]);
    // Run 1's lines stay in the history, closed by run 2.
    expect(stored(t)).toEqual(fromJson(t));
    expect(t.db.prepare("SELECT COUNT(*) FROM _claim_lines WHERE valid_to_run = 2").pluck().get()).toBe(3);

    // A run that changes the lines, then fails: nothing of it stays.
    const before = stored(t);
    d = data([claim("k1", [line("99213", "99.00"), line("11111", "1.00")]), claim("k3", [line("22222", "4.00")])]);
    const failed = await sync({ source: memorySource(() => d, { failFromFetch: 6 }), store: t.store, claimsWindow: window });
    expect(failed.status).toBe("failed");
    expect(stored(t)).toEqual(before);
    expect(stored(t)).toEqual(fromJson(t));
  });

  it("after a first load killed before its end (no lines yet, no triggers), the next run writes every line", async () => {
    const t = tempStore();
    cleanup.push(t.cleanup);
    let d = data([claim("k1", [line("99213", "10.00"), line("81001", "2.50")]), claim("k2", [line("36415", "3.07")])]);
    await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window });
    // What a kill -9 during a first load leaves: claim versions committed, their lines not read yet.
    t.db.exec("DELETE FROM _claim_lines");
    for (const name of t.db.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger'").pluck().all() as string[]) t.db.exec(`DROP TRIGGER ${name}`);
    d = data([claim("k1", [line("99213", "12.00")]), claim("k2", [line("36415", "3.07")])]);
    const r = await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window });
    expect(r.status).toBe("succeeded");
    expect(stored(t)).toEqual(fromJson(t));
    expect(current(t).map((l) => (l as { amount: string }).amount)).toEqual(["12.00", "3.07"]);
  });

  it("a claim seen twice in one run (moved to another group) has the lines of its last sighting", async () => {
    const t = tempStore();
    cleanup.push(t.cleanup);
    let d = data([claim("k1", [line("99213", "10.00")])]);
    await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window });
    // Walked under G1, then read again under G2 with other lines: the run's version is amended.
    const g2 = { id: "gp2", groupId: "G2", plans: [{ id: "p2", name: "B" }] };
    const sightings = [claim("k1", [line("99213", "11.00")]), claim("k1", [line("70000", "5.00"), line("70001", "6.00")], { groupId: "G2" })];
    let reads = 0;
    const moving: MemoryData = {
      ...data([]),
      groups: [...data([]).groups, g2],
      get claims() {
        return [sightings[Math.min(reads++, 1)]!];
      },
    };
    d = moving;
    const r = await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window });
    expect(r.status).toBe("succeeded");
    // Seen twice, changed once: one version before the run, one (amended) from it.
    expect(t.db.prepare("SELECT COUNT(*) FROM claims_history WHERE id = 'k1'").pluck().get()).toBe(2);
    expect(reads).toBeGreaterThanOrEqual(2);
    expect(stored(t)).toEqual(fromJson(t));
    expect(current(t)).toEqual(
      (JSON.parse(t.db.prepare("SELECT data FROM claims WHERE id = 'k1'").pluck().get() as string).lines as { code: string; amount: string }[]).map((l, i) => ({
        claim_id: "k1",
        line_no: i + 1,
        memberId: "m1",
        code: l.code,
        amount: l.amount,
        amount_cents: Math.round(Number(l.amount) * 100),
      })),
    );
  });
});
