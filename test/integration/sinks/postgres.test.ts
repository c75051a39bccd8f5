/**
 * The Postgres warehouse sink against a real PostgreSQL (a throwaway cluster on a unix socket):
 * after runs with inserts, updates, deletes and a reinstatement, the warehouse's current tables
 * equal the SQLite views row for row and the history tables agree; loading a run twice is a
 * no-op; a warehouse fed from one snapshot refuses another's runs, and one laid out by another
 * version is refused.
 */
import { describe, expect, it } from "vitest";
import { postgresSink } from "../../../src/sinks/postgres/postgres-sink.js";
import { deliverToSink, writeDelivery } from "../../../src/sinks/sink.js";
import { useTempStores, type TempStore } from "../../helpers/temp-store.js";
import { usePostgres } from "../../helpers/pg.js";
import { baseData, claim, member, runSync } from "../../unit/sinks/fixtures.js";
import { snapshotAsOf, warehouse } from "./warehouse-compare.js";

const pg = usePostgres();
const setup = useTempStores();

/** Three runs: the base data; updates, a delete, an insert; a reinstatement and a claim deleted. */
async function threeRuns(t: TempStore): Promise<number[]> {
  const d1 = baseData();
  d1.members[0]!.address = { city: 'Tab\there, "quoted", back\\slash\nnew line, São Paulo 李' };
  const r1 = await runSync(t, d1);
  const d2 = baseData();
  d2.members[0]!.firstName = "Ana Maria";
  d2.members = d2.members.filter((m) => m.id !== "m2");
  d2.members.push(member("m4", "Dmitri"));
  (d2.claims[0] as Record<string, unknown>).paidAmount = "1234.56";
  d2.claims.push(claim("k3", "2026-03-01"));
  const r2 = await runSync(t, d2);
  const d3 = baseData(); // m2 comes back; m4 and k3 go
  d3.members[0]!.firstName = "Ana Maria";
  const r3 = await runSync(t, d3);
  for (const r of [r1, r2, r3]) expect(r.status).toBe("succeeded");
  return [r1.runId, r2.runId, r3.runId];
}

describe("the Postgres warehouse sink", () => {
  it("after inserts, updates, deletes and a reinstatement, run by run or all at once, current and history equal the snapshot", async (ctx) => {
    const url = await pg.freshDatabase(ctx);
    const t = setup();
    const d1 = baseData();
    const r1 = await runSync(t, d1);
    const byRun = `${url}&schema=by_run`;
    expect((await deliverToSink(t.db, postgresSink(byRun), r1.runId)).status).toBe("delivered");
    const rest = await threeRuns(t);
    for (const r of rest) {
      const o = await deliverToSink(t.db, postgresSink(byRun), r);
      expect(o.status, JSON.stringify(o.error)).toBe("delivered");
      const w = await warehouse(pg.query, byRun, "by_run");
      const s = snapshotAsOf(t.db, r);
      expect(w.current).toEqual(s.current);
      expect(w.history).toEqual(s.history);
    }
    // One delivery of all four runs into another schema gives the same warehouse.
    const all = `${url}&schema=all_at_once`;
    const last = rest[rest.length - 1]!;
    const o = await deliverToSink(t.db, postgresSink(all), last);
    expect(o.runs).toEqual([r1.runId, ...rest]);
    const w = await warehouse(pg.query, all, "all_at_once");
    expect(w.loads).toEqual([r1.runId, ...rest]);
    const s = snapshotAsOf(t.db, last);
    expect(w.current).toEqual(s.current);
    expect(w.history).toEqual(s.history);
    // The history saw m2 inserted, deleted, and inserted again; m1's update closed its first version.
    expect(s.history.members.filter((x) => (x as { id: string }).id === "m2").map((x) => [(x as { from: number }).from, (x as { to: number | null }).to])).toEqual([
      [r1.runId, rest[1]],
      [rest[2], null],
    ]);
    // Typed: dates as DATE, amounts as exact NUMERIC, the plain SSN nowhere.
    const types = await pg.query<{ column_name: string; data_type: string }>(all, "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'all_at_once' AND table_name = 'claims'");
    const typeOf = Object.fromEntries(types.map((x) => [x.column_name, x.data_type]));
    expect(typeOf).toMatchObject({ serviceDateFrom: "date", paidAmount: "numeric", memberId: "text", data: "jsonb" });
    const sum = await pg.query<{ s: string }>(all, "SELECT sum(\"claimAmount\")::text AS s FROM all_at_once.claims");
    const cents = t.db.prepare("SELECT sum(claimAmount_cents) FROM claims").pluck().get() as number;
    expect(cents).toBeGreaterThan(0);
    expect(sum[0]!.s).toBe(`${Math.trunc(cents / 100)}.${String(cents % 100).padStart(2, "0")}`);
    const paid = await pg.query<{ p: string }>(all, "SELECT \"paidAmount\"::text AS p FROM all_at_once.claims WHERE id = 'k1'");
    expect(paid).toEqual([{ p: null }]); // k1's paid amount went back to none in the last run
    const paidHist = await pg.query<{ p: string }>(all, "SELECT \"paidAmount\"::text AS p FROM all_at_once.claims_history WHERE id = 'k1' AND \"paidAmount\" IS NOT NULL");
    expect(paidHist).toEqual([{ p: "1234.56" }]);
    const dump = JSON.stringify(await pg.query(all, "SELECT data FROM all_at_once.members_history"));
    expect(dump).toContain("ssn_last4");
    expect(dump).not.toMatch(/123-45-67/);
  });

  it("loading the same runs again changes nothing; a warehouse fed from one snapshot refuses another's", async (ctx) => {
    const url = await pg.freshDatabase(ctx);
    const t = setup();
    const runs = await threeRuns(t);
    const last = runs[runs.length - 1]!;
    expect((await deliverToSink(t.db, postgresSink(url), last)).status).toBe("delivered");
    const before = await warehouse(pg.query, url);
    const loadedAt = await pg.query(url, "SELECT run_id, loaded_at::text FROM benefits_sync._loads ORDER BY run_id");
    // The ledger has nothing pending; a direct load (what export --sink does) finds nothing to load.
    expect((await deliverToSink(t.db, postgresSink(url), last)).status).toBe("nothing");
    const again = await writeDelivery(t.db, postgresSink(url), { folderRun: last, runs: [last] });
    expect(again.loadedRuns).toEqual([]);
    expect(await warehouse(pg.query, url)).toEqual(before);
    expect(await pg.query(url, "SELECT run_id, loaded_at::text FROM benefits_sync._loads ORDER BY run_id")).toEqual(loadedAt);
    // Another snapshot (its own run 1, 2, 3) must not be mixed in.
    const other = setup();
    await threeRuns(other);
    const refused = await deliverToSink(other.db, postgresSink(url), last);
    expect(refused.status).toBe("failed");
    expect(refused.error?.message).toMatch(/fed from another snapshot.*schema=/);
    expect(await warehouse(pg.query, url)).toEqual(before);
  });

  it("a warehouse started at run 2 on purpose loads runs 2 and 3 only, keeps that start, and refuses another", async (ctx) => {
    const url = await pg.freshDatabase(ctx);
    const t = setup();
    const [, r2, r3] = await threeRuns(t);
    const o = await deliverToSink(t.db, postgresSink(url), r3!, undefined, r2);
    expect(o.status, JSON.stringify(o.error)).toBe("delivered");
    expect(o.runs).toEqual([r2, r3]);
    const w = await warehouse(pg.query, url);
    expect(w.loads).toEqual([r2, r3]);
    // Run 1's members that no later run changed never reached it: m3 was inserted in run 1 only.
    const ids = (w.current.members as { id: string }[]).map((m) => m.id).sort();
    expect(ids).not.toContain("m3");
    expect(ids).toContain("m1"); // updated in run 2
    // The same start again: nothing pending; another start: refused, the warehouse as it was.
    expect((await deliverToSink(t.db, postgresSink(url), r3!, undefined, r2)).status).toBe("nothing");
    const refused = await deliverToSink(t.db, postgresSink(url), r3!, undefined, 1);
    expect(refused).toMatchObject({ status: "failed", error: { code: "CONFIG" } });
    expect(refused.error?.message).toMatch(new RegExp(`was started at run ${r2}; it keeps that start`));
    expect(await warehouse(pg.query, url)).toEqual(w);
  });

  it("a warehouse laid out by another version (history kept in tables) is refused with what to do, and left as it was", async (ctx) => {
    const url = await pg.freshDatabase(ctx);
    const t = setup();
    const runs = await threeRuns(t);
    // Layout 1: a _meta without 'layout', and a history table where this version has a view.
    await pg.query(url, "CREATE SCHEMA benefits_sync; CREATE TABLE benefits_sync._meta (key text PRIMARY KEY, value text NOT NULL)");
    await pg.query(url, "INSERT INTO benefits_sync._meta VALUES ('snapshot_id', 'x'); CREATE TABLE benefits_sync.claims_history (id text)");
    const refused = await deliverToSink(t.db, postgresSink(url), runs[runs.length - 1]!);
    expect(refused.status).toBe("failed");
    expect(refused.error?.message).toMatch(/layout 1.*this one writes layout 3.*schema=NAME.*DROP SCHEMA "benefits_sync" CASCADE/);
    const tables = await pg.query<{ t: string }>(url, "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'benefits_sync' ORDER BY 1");
    expect(tables.map((x) => x.t)).toEqual(["_meta", "claims_history"]);
  });

  it("a warehouse that lost its last loads (restored from a backup) gets them back, in order, from the next load", async (ctx) => {
    const url = await pg.freshDatabase(ctx);
    const t = setup();
    const runs = await threeRuns(t);
    const [first, , last] = runs as [number, number, number];
    await writeDelivery(t.db, postgresSink(url), { folderRun: first, runs: [first] });
    // The ledger (SQLite) believes nothing more is owed up to `first`; the next delivery asks for the rest.
    const o = await deliverToSink(t.db, postgresSink(url), last);
    expect(o.status).toBe("delivered");
    const w = await warehouse(pg.query, url);
    expect(w.loads).toEqual(runs);
    const s = snapshotAsOf(t.db, last);
    expect(w.current).toEqual(s.current);
    expect(w.history).toEqual(s.history);
  });
});
