/**
 * The analyst's snapshot: typed columns that are real (declared, indexed) columns, exact money,
 * readable changes, the relation views, indexes built after a first load, and the migration of a
 * snapshot made before all this.
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { migrations } from "../../../src/store/schema/migrations.js";
import { openDatabase } from "../../../src/store/file/database.js";
import { cents } from "../../../src/store/schema/money-sql.js";
import { LoadCacheSize, StoreCacheSize } from "../../../src/store/schema/bulk-build.js";
import { memorySource, type MemoryData } from "../../helpers/memory-source.js";
import { syncStarted, tempStore } from "../../helpers/temp-store.js";

const window = { from: "2026-01-01", to: "2026-12-31" };
let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.reverse()) c();
  cleanup = [];
});

const claim = (id: string, memberId: string, paid: string, extra: Record<string, unknown> = {}) => ({
  id,
  claimNumber: `N-${id}`,
  memberId,
  coverageId: `c-${memberId}`,
  groupId: "G1",
  planId: "p1",
  serviceDateFrom: "2026-02-03",
  claimStatus: "paid",
  claimAmount: paid,
  allowedAmount: paid,
  paidAmount: paid,
  processing: { receivedDate: "2026-02-05", paidDate: null },
  lines: [
    { code: "99213", amount: "0.10" },
    { code: "81001", amount: "0.20" },
  ],
  ...extra,
});
const member = (id: string, city: string) => ({
  id,
  firstName: "Ana",
  lastName: "Lee",
  ssn: "123-45-6789",
  address: { line1: "1 Main St", city },
  coverages: [{ id: `c-${id}`, groupId: "G1", planId: "p1", status: "active", startDate: "2026-01-01", endDate: null }],
});
function data(members: Record<string, unknown>[], claims: Record<string, unknown>[]): MemoryData {
  return { designs: [{ id: "d1", name: "Gold" }], groups: [{ id: "gp1", groupId: "G1", plans: [{ id: "p1", name: "A" }] }], members, claims };
}

describe("the analyst's snapshot", () => {
  it("money: decimal text kept as sent, and integer cents, exact for every two-decimal amount", async () => {
    const t = tempStore();
    cleanup.push(t.cleanup);
    const claims = Array.from({ length: 30 }, (_, i) => claim(`k${i}`, "m1", i % 2 ? "0.10" : "0.20"));
    claims.push(claim("big", "m1", "98765432.99"), claim("f1", "m1", "0.29"), claim("f2", "m1", "0.57"), claim("f3", "m1", "1.15"), claim("f4", "m1", "-19.99"), claim("x1", "m1", "1,234.50"), claim("x2", "m1", "12.345"), claim("x3", "m1", ""), claim("x4", "m1", "abc"), claim("x5", "m1", "1-2"));
    const d = data([member("m1", "Lyon")], claims);
    await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window });
    const row = t.db.prepare("SELECT paidAmount, paidAmount_cents, typeof(paidAmount) AS t, typeof(paidAmount_cents) AS tc FROM claims WHERE id = 'big'").get();
    expect(row).toEqual({ paidAmount: "98765432.99", paidAmount_cents: 9876543299, t: "text", tc: "integer" });
    expect(t.db.prepare("SELECT SUM(paidAmount_cents) FROM claims WHERE id LIKE 'k%'").pluck().get()).toBe(450);
    expect(t.db.prepare("SELECT op, ended_by FROM claims_history WHERE id = 'k0'").get()).toEqual({ op: "insert", ended_by: null });
    // Amounts whose value times 100 is not a whole binary double (0.29 * 100 = 28.999999999999996).
    expect(t.db.prepare("SELECT id, paidAmount_cents FROM claims WHERE id LIKE 'f%' ORDER BY id").all()).toEqual([
      { id: "f1", paidAmount_cents: 29 },
      { id: "f2", paidAmount_cents: 57 },
      { id: "f3", paidAmount_cents: 115 },
      { id: "f4", paidAmount_cents: -1999 },
    ]);
    // Not a two-decimal amount: no cents rather than a wrong number.
    expect(t.db.prepare("SELECT COUNT(*) FROM claims WHERE id LIKE 'x%' AND paidAmount_cents IS NULL").pluck().get()).toBe(5);
    const lines = t.db.prepare("SELECT line_no, code, amount, amount_cents FROM claim_lines WHERE claim_id = 'k0' ORDER BY line_no").all();
    expect(lines).toEqual([
      { line_no: 1, code: "99213", amount: "0.10", amount_cents: 10 },
      { line_no: 2, code: "81001", amount: "0.20", amount_cents: 20 },
    ]);
  });

  it("money sent as a JSON number: null cents on a claim and on its lines alike (one rule, as the README says)", async () => {
    const t = tempStore();
    cleanup.push(t.cleanup);
    // A TEXT column would turn 12.5 into "12.5" (1250 cents) and 100 into "100" (10000 cents).
    const numbers = [12.5, 0.30000000000000004, 100];
    const claims = numbers.map((n, i) =>
      claim(`n${i}`, "m1", "1.00", { claimAmount: n, allowedAmount: n, paidAmount: n, lines: [{ code: "99213", amount: n }, { code: "81001", amount: "2.50" }] }),
    );
    await syncStarted({ source: memorySource(() => data([member("m1", "Lyon")], claims)), store: t.store, claimsWindow: window });
    const rows = t.db.prepare("SELECT id, claimAmount_cents AS c, allowedAmount_cents AS a, paidAmount_cents AS p FROM claims ORDER BY id").all();
    expect(rows).toEqual([
      { id: "n0", c: null, a: null, p: null },
      { id: "n1", c: null, a: null, p: null },
      { id: "n2", c: null, a: null, p: null },
    ]);
    const lines = t.db.prepare("SELECT claim_id, line_no, amount_cents FROM claim_lines ORDER BY claim_id, line_no").all();
    expect(lines).toEqual(
      ["n0", "n1", "n2"].flatMap((id) => [
        { claim_id: id, line_no: 1, amount_cents: null },
        { claim_id: id, line_no: 2, amount_cents: 250 },
      ]),
    );
    // The reconciliation's consistency check sees them as inexact, not as wrong numbers.
    expect(t.db.prepare("SELECT COUNT(*) FROM claims WHERE paidAmount IS NOT NULL AND paidAmount_cents IS NULL").pluck().get()).toBe(3);
  });

  it("typed columns are declared columns of the tables, and the questions' filters use an index", async () => {
    const t = tempStore();
    cleanup.push(t.cleanup);
    const d = data([member("m1", "Lyon")], [claim("k1", "m1", "1.00")]);
    await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window });
    const cols = t.db.prepare("SELECT name, type, hidden FROM pragma_table_xinfo('_claims_v')").all() as { name: string; type: string; hidden: number }[];
    expect(cols).toContainEqual({ name: "memberId", type: "TEXT", hidden: 0 });
    expect(cols).toContainEqual({ name: "processing_receivedDate", type: "TEXT", hidden: 0 });
    // A plain column written with the version (a generated one is never read from an index alone).
    expect(cols).toContainEqual({ name: "paidAmount_cents", type: "INTEGER", hidden: 0 });
    expect(t.db.prepare("SELECT memberId, processing_receivedDate, paidAmount_cents FROM claims").get()).toEqual({ memberId: "m1", processing_receivedDate: "2026-02-05", paidAmount_cents: 100 });
    // The run measured these one-row tables (PRAGMA optimize), and for one row a scan is the
    // cheaper plan: the plans a large snapshot gets are checked without those statistics.
    t.db.exec("DELETE FROM sqlite_stat1; ANALYZE sqlite_schema");
    const plan = (sql: string) => (t.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join(" | ");
    expect(plan("SELECT * FROM claims WHERE memberId = 'm1'")).toMatch(/USING INDEX _claims_v_ix_memberId/);
    expect(plan("SELECT * FROM coverages WHERE memberId = 'm1'")).toMatch(/USING INDEX _coverages_v_ix_memberId/);
    // Counting current rows by a key needs no table row at all.
    expect(plan("SELECT COUNT(*) FROM claims WHERE memberId = 'm1'")).toMatch(/USING COVERING INDEX _claims_v_ix_memberId/);
    expect(plan("SELECT status, COUNT(*) FROM coverages GROUP BY status")).toMatch(/USING COVERING INDEX _coverages_v_ix_status/);
    // Claims joined to members for their names: no table row on either side.
    const join = plan("SELECT m.id, m.lastName, COUNT(*) AS n FROM claims c JOIN members m ON m.id = c.memberId GROUP BY m.id ORDER BY n DESC LIMIT 5");
    expect(join).toMatch(/USING COVERING INDEX _members_v_history/);
    expect(join).toMatch(/USING COVERING INDEX _claims_v_ix_memberId/);
    // Paid per member, and claims joined to members by state: the cents come with the member index.
    expect(plan("SELECT memberId, SUM(paidAmount_cents), SUM(claimAmount_cents) FROM claims GROUP BY memberId")).toMatch(/USING COVERING INDEX _claims_v_ix_memberId/);
    expect(plan("SELECT * FROM claims WHERE serviceDateFrom BETWEEN '2026-01-01' AND '2026-01-31'")).toMatch(/USING INDEX _claims_v_ix_serviceDateFrom/);
    expect(plan("SELECT * FROM members_history WHERE id = 'm1'")).toMatch(/USING INDEX _members_v_history/);
    expect(plan("SELECT resource, op, COUNT(*) FROM changes WHERE run_id = 1 GROUP BY 1, 2")).not.toMatch(/SCAN _/);
  });

  it("what changed, readable: one row per changed field with old and new values, and the whole before and after", async () => {
    const t = tempStore();
    cleanup.push(t.cleanup);
    let d = data([member("m1", "Lyon"), member("m2", "Nice")], [claim("k1", "m1", "1.00"), claim("k2", "m2", "2.00")]);
    await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window });
    d = data([member("m1", "Paris")], [claim("k1", "m1", "1.50", { claimStatus: "adjusted" })]);
    const r = await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window });
    expect(r.status).toBe("succeeded");
    const fields = t.db.prepare("SELECT resource, id, field, column_name, old_value, new_value FROM field_changes WHERE run_id = ? ORDER BY 1, 2, 3").all(r.runId);
    expect(fields).toEqual([
      { resource: "claims", id: "k1", field: "allowedAmount", column_name: "allowedAmount", old_value: "1.00", new_value: "1.50" },
      { resource: "claims", id: "k1", field: "claimAmount", column_name: "claimAmount", old_value: "1.00", new_value: "1.50" },
      { resource: "claims", id: "k1", field: "claimStatus", column_name: "claimStatus", old_value: "paid", new_value: "adjusted" },
      { resource: "claims", id: "k1", field: "paidAmount", column_name: "paidAmount", old_value: "1.00", new_value: "1.50" },
      { resource: "members", id: "m1", field: "address.city", column_name: "address_city", old_value: "Lyon", new_value: "Paris" },
    ]);
    const records = t.db.prepare("SELECT resource, id, op, before, after FROM change_records WHERE run_id = ? ORDER BY 1, 2").all(r.runId) as {
      resource: string;
      id: string;
      op: string;
      before: string | null;
      after: string | null;
    }[];
    const m1 = records.find((x) => x.id === "m1")!;
    expect(JSON.parse(m1.before!).address.city).toBe("Lyon");
    expect(JSON.parse(m1.after!).address.city).toBe("Paris");
    const m2 = records.find((x) => x.id === "m2")!;
    expect(m2.op).toBe("delete");
    expect(JSON.parse(m2.before!).address.city).toBe("Nice");
    expect(m2.after).toBeNull();
    expect(records.map((x) => `${x.resource} ${x.op} ${x.id}`)).toEqual(["claims update k1", "claims delete k2", "coverages delete c-m2", "members update m1", "members delete m2"]);
    // A member's groups without json_each.
    expect(t.db.prepare("SELECT memberId, groupId, coverages, active_coverages, last_end_date FROM memberships").all()).toEqual([
      { memberId: "m1", groupId: "G1", coverages: 1, active_coverages: 1, last_end_date: null },
    ]);
  });

  it("a first load builds its indexes once, at the end of the run (a failed one leaves the analysts' to the run that resumes)", async () => {
    const t = tempStore();
    cleanup.push(t.cleanup);
    const d = data([member("m1", "Lyon")], [claim("k1", "m1", "1.00")]);
    const indexes = (like: string) => t.db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND name LIKE ?").pluck().all(like);
    const analysts = () => indexes("_claims_v_ix_%");
    // The sync's own indexes on the members and their coverages (ids, parents, run changes).
    const syncs = () => [...indexes("_members_v_current"), ...indexes("_coverages_v_part"), ...indexes("_coverages_v_from")];
    expect(analysts()).toHaveLength(6);
    expect(syncs()).toHaveLength(3);
    let fail = true;
    const duringWalk: unknown[][] = [];
    const cacheDuringWalk: unknown[] = [];
    const source = memorySource(() => d);
    const failing = {
      ...source,
      pages: (r: Parameters<typeof source.pages>[0], f?: Parameters<typeof source.pages>[1], o?: Parameters<typeof source.pages>[2]) => {
        if (r === "claims") duringWalk.push(syncs());
        if (r === "claims") cacheDuringWalk.push(t.db.pragma("cache_size", { simple: true }));
        if (r === "claims" && fail) throw new Error("boom");
        return source.pages(r, f, o);
      },
    };
    const r1 = await syncStarted({ source: failing, store: t.store, claimsWindow: window });
    expect(r1.status).toBe("failed");
    // While the members loaded from empty, the sync's indexes on them were not kept row by row.
    expect(duringWalk[0]).toEqual([]);
    expect(analysts()).toHaveLength(0);
    // A load from empty only appends: it held a small page cache, the store's is back when it ends.
    expect(cacheDuringWalk).toEqual([LoadCacheSize]);
    expect(t.db.pragma("cache_size", { simple: true })).toBe(StoreCacheSize);
    // The run that resumes diffs against what this one stored: it finds the sync's indexes built.
    expect(syncs()).toHaveLength(3);
    fail = false;
    const r2 = await syncStarted({ source: failing, store: t.store, claimsWindow: window });
    expect(r2.status).toBe("succeeded");
    expect(duringWalk[1]).toHaveLength(3);
    // The run that resumes looks up what the first one stored: the store's whole cache.
    expect(cacheDuringWalk).toEqual([LoadCacheSize, StoreCacheSize]);
    expect(-LoadCacheSize).toBeLessThan(-StoreCacheSize); // (in KiB, negative)
    expect(analysts()).toHaveLength(6);
    expect(syncs()).toHaveLength(3);
    expect(t.db.prepare("SELECT COUNT(*) FROM claims WHERE memberId = 'm1'").pluck().get()).toBe(1);
    // The builds ran with a small page cache (a smaller sort, see ensureIndexes); the store's is back.
    expect(t.db.pragma("cache_size", { simple: true })).toBe(StoreCacheSize);
    // The sync's probe by id searches an index, it does not scan the table.
    const plan = t.db.prepare("EXPLAIN QUERY PLAN SELECT id, vid, fp FROM _members_v WHERE id = 'm1' AND valid_to_run IS NULL").all() as { detail: string }[];
    expect(plan.map((p) => p.detail).join(" ")).toMatch(/^SEARCH _members_v USING (COVERING )?INDEX/);
  });

  it("a new snapshot has 16 KB pages; one made before keeps the size it was made with", () => {
    const dir = mkdtempSync(join(tmpdir(), "bsync-pages-"));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const fresh = openDatabase(join(dir, "new.db"));
    expect(fresh.pragma("page_size", { simple: true })).toBe(16384);
    expect(fresh.pragma("auto_vacuum", { simple: true })).toBe(2);
    fresh.close();
    const old = new BetterSqlite3(join(dir, "old.db"));
    old.pragma("page_size = 4096");
    // As an older benefits-sync made it (a file with someone else's tables is refused, not migrated).
    migrations[0]!(old);
    old.pragma("user_version = 1");
    old.close();
    const reopened = openDatabase(join(dir, "old.db"));
    expect(reopened.pragma("page_size", { simple: true })).toBe(4096);
    expect(reopened.prepare("SELECT COUNT(*) FROM _runs").pluck().get()).toBe(0);
    reopened.close();
  });

  it("a snapshot made before the typed columns is migrated in place: every version kept, the columns filled", () => {
    const dir = mkdtempSync(join(tmpdir(), "bsync-mig-"));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, "old.db");
    const old = new BetterSqlite3(path);
    for (const m of migrations.slice(0, 2)) m(old);
    // The version table and views as schema 2 made them: no typed column, views over JSON.
    old.exec(`
      DROP TABLE _claims_v;
      CREATE TABLE _claims_v (vid INTEGER PRIMARY KEY, id TEXT NOT NULL, valid_from_run INTEGER NOT NULL, valid_to_run INTEGER,
        op TEXT NOT NULL, ended_by TEXT, part TEXT, changed_fields TEXT, fp INTEGER, hash TEXT NOT NULL, data TEXT NOT NULL);
      CREATE INDEX _claims_v_current ON _claims_v (id, fp) WHERE valid_to_run IS NULL;
      CREATE VIEW claims AS SELECT id, json_extract(data, '$.paidAmount') AS paidAmount, hash, data FROM _claims_v WHERE valid_to_run IS NULL;
      CREATE VIEW changes AS SELECT valid_from_run AS run_id, 'claims' AS resource, id, op, changed_fields FROM _claims_v;`);
    old.pragma("user_version = 2");
    old.prepare("INSERT INTO _runs (job, status, started_at, options) VALUES ('sync', 'succeeded', '2026-01-01T00:00:00Z', '{}')").run();
    old.prepare("INSERT INTO _runs (job, status, started_at, options) VALUES ('sync', 'succeeded', '2026-01-02T00:00:00Z', '{}')").run();
    const ins = old.prepare("INSERT INTO _claims_v (id, valid_from_run, valid_to_run, op, ended_by, part, changed_fields, fp, hash, data) VALUES (?, ?, ?, ?, ?, 'G1', ?, NULL, 'h', ?)");
    ins.run("k1", 1, 2, "insert", "update", null, JSON.stringify(claim("k1", "m1", "1.00")));
    ins.run("k1", 2, null, "update", null, '["paidAmount"]', JSON.stringify(claim("k1", "m1", "3.25")));
    old.close();
    const db = openDatabase(path);
    cleanup.push(() => db.close());
    expect(db.pragma("user_version", { simple: true })).toBe(migrations.length);
    expect(db.prepare("SELECT id, paidAmount, paidAmount_cents FROM claims").all()).toEqual([{ id: "k1", paidAmount: "3.25", paidAmount_cents: 325 }]);
    expect(db.prepare("SELECT valid_from_run, paidAmount FROM claims_history ORDER BY valid_from_run").all()).toEqual([
      { valid_from_run: 1, paidAmount: "1.00" },
      { valid_from_run: 2, paidAmount: "3.25" },
    ]);
    expect(db.prepare("SELECT field, old_value, new_value FROM field_changes WHERE run_id = 2").all()).toEqual([{ field: "paidAmount", old_value: "1.00", new_value: "3.25" }]);
  });

  it("a snapshot whose claim amounts were TEXT columns is rebuilt: an amount sent as a number gets no cents, one sent as text keeps them", () => {
    const dir = mkdtempSync(join(tmpdir(), "bsync-money-"));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, "old.db");
    // Schema 7 as it was: the amounts declared TEXT (a JSON number became text), the cents generated from them.
    const made = openDatabase(path);
    const tableSql = made.prepare("SELECT sql FROM sqlite_schema WHERE name = '_claims_v'").pluck().get() as string;
    const textAmounts = tableSql
      .replace(/^(\s*)"(claimAmount|allowedAmount|paidAmount)",$/gm, '$1"$2" TEXT,')
      .replace(/^(\s*)"(claimAmount|allowedAmount|paidAmount)_cents" INTEGER(,?)$/gm, (_, sp, a, comma) => `${sp}"${a}_cents" INTEGER GENERATED ALWAYS AS (${cents(`"${a}"`)}) STORED${comma}`);
    expect((textAmounts.match(/ TEXT,/g)?.length ?? 0) - (tableSql.match(/ TEXT,/g)?.length ?? 0)).toBe(3);
    expect(textAmounts.match(/GENERATED ALWAYS/g)?.length).toBe(3);
    for (const v of made.prepare("SELECT name FROM sqlite_schema WHERE type = 'view'").pluck().all() as string[]) made.exec(`DROP VIEW "${v}"`);
    // The JSON was in the version row then (migration 14 moved it beside).
    const withJson = textAmounts.replace(/^(\s*)fp INTEGER,$/m, "$1fp INTEGER, hash TEXT NOT NULL, data TEXT NOT NULL,");
    expect(withJson).not.toBe(textAmounts);
    // Nor the tables of later steps (new_fields is schema 9's): a header behind them is refused as a wrong one.
    made.exec(`DROP TABLE _claims_v; DROP TABLE _claims_d; DROP TABLE new_fields; ${withJson}`);
    made.pragma("user_version = 7");
    made.prepare("INSERT INTO _runs (job, status, started_at, options) VALUES ('sync', 'succeeded', '2026-01-01T00:00:00Z', '{}')").run();
    const ins = made.prepare(
      `INSERT INTO _claims_v (id, valid_from_run, op, part, hash, data, claimAmount, allowedAmount, paidAmount)
       SELECT ?, 1, 'insert', 'G1', 'h', d, json_extract(d, '$.claimAmount'), json_extract(d, '$.allowedAmount'), json_extract(d, '$.paidAmount') FROM (SELECT ? AS d)`,
    );
    ins.run("n1", JSON.stringify(claim("n1", "m1", "1.00", { claimAmount: 0.30000000000000004, allowedAmount: 12.5, paidAmount: 0.30000000000000004 })));
    ins.run("s1", JSON.stringify(claim("s1", "m1", "2.50")));
    // The defect as it stood: the number 12.5 read as the text "12.5", 1250 cents (its claim line: none).
    expect(made.prepare("SELECT allowedAmount, allowedAmount_cents FROM _claims_v WHERE id = 'n1'").get()).toEqual({ allowedAmount: "12.5", allowedAmount_cents: 1250 });
    made.close();

    const db = openDatabase(path);
    cleanup.push(() => db.close());
    expect(db.pragma("user_version", { simple: true })).toBe(migrations.length);
    expect(db.prepare("SELECT id, paidAmount, paidAmount_cents, allowedAmount_cents, claimAmount_cents FROM claims ORDER BY id").all()).toEqual([
      { id: "n1", paidAmount: 0.30000000000000004, paidAmount_cents: null, allowedAmount_cents: null, claimAmount_cents: null },
      { id: "s1", paidAmount: "2.50", paidAmount_cents: 250, allowedAmount_cents: 250, claimAmount_cents: 250 },
    ]);
    expect(db.prepare("SELECT COUNT(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = '_claims_v' AND name LIKE '_claims_v_ix_%'").pluck().get()).toBeGreaterThan(0);
  });
});
