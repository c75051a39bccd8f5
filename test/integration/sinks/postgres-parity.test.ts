/**
 * The warehouse gives an analyst what the snapshot gives: claim lines (current, closed and their
 * history, loaded with the claims), the runs (start, finish, status, what each walked) and their
 * counts, the per-field changes with old and new values, and typed timestamps. Each is compared,
 * run by run, with the snapshot it was loaded from (real PostgreSQL, real SQLite files). A
 * warehouse of the previous layout is refused with what to do, and left as it was.
 */
import type { Database } from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { postgresSink } from "../../../src/sinks/postgres/postgres-sink.js";
import { deliverToSink } from "../../../src/sinks/sink.js";
import { useTempStores, type TempStore } from "../../helpers/temp-store.js";
import { canonical } from "../../helpers/canonical.js";
import { usePostgres } from "../../helpers/pg.js";
import { baseData, claim, member, runSync } from "../../unit/sinks/fixtures.js";

const pg = usePostgres();
const setup = useTempStores();

type Row = Record<string, unknown>;
/** Rows as sorted canonical JSON lines: a comparison that ignores row order. */
const lines = (rows: Row[]): string[] => rows.map(canonical).sort();
/** A timestamp as an instant, whichever way it is written ("…T…Z" in SQLite, "… …+00" from PostgreSQL). */
const instant = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(String(v).replace(" ", "T").replace(/\+00$/, "Z")).toISOString());

/** Three runs: lines added to and taken from a claim, a claim deleted, a member renamed and moved. */
async function runs(t: TempStore): Promise<number[]> {
  const d1 = baseData();
  (d1.members[0] as Row).createdAt = "2026-01-05T10:00:00.000Z";
  const r1 = await runSync(t, d1);
  const d2 = baseData();
  (d2.members[0] as Row).createdAt = "2026-01-05T10:00:00.000Z";
  d2.members[0]!.firstName = "Ana Maria";
  d2.members[0]!.address = { city: "Dallas" };
  (d2.claims[0] as Row).lines = [{ code: "99213", amount: "60.00" }, { code: "80050", amount: "40.00" }];
  (d2.claims[0] as Row).paidAmount = "1234.56";
  d2.claims.push(claim("k3", "2026-03-01"));
  d2.members.push(member("m4", "Dmitri"));
  const r2 = await runSync(t, d2);
  const d3 = baseData();
  (d3.members[0] as Row).createdAt = "2026-01-05T10:00:00.000Z";
  d3.members[0]!.firstName = "Ana Maria";
  d3.claims = d3.claims.filter((c) => c.id !== "k2");
  const r3 = await runSync(t, d3);
  for (const r of [r1, r2, r3]) expect(r.status).toBe("succeeded");
  return [r1.runId, r2.runId, r3.runId];
}

/** Every claim version's lines up to run `asOf`, numbered as the snapshot's claim_lines view numbers them. */
function snapshotLines(db: Database, asOf: number): { current: Row[]; history: Row[] } {
  const versions = db.prepare("SELECT v.id, v.valid_from_run, v.valid_to_run, d.data FROM _claims_v v JOIN _claims_d d ON d.vid = v.vid WHERE v.valid_from_run <= ?").all(asOf) as Row[];
  const current: Row[] = [];
  const history: Row[] = [];
  for (const v of versions) {
    const to = v.valid_to_run !== null && Number(v.valid_to_run) <= asOf ? Number(v.valid_to_run) : null;
    const ls = ((JSON.parse(String(v.data)) as { lines?: { code: string; amount: string }[] }).lines ?? []);
    ls.forEach((l, i) => {
      const row = { claim_id: v.id, line_no: String(i + 1), code: l.code, amount: l.amount };
      history.push({ ...row, valid_from_run: String(v.valid_from_run), valid_to_run: to === null ? null : String(to) });
      if (to === null) current.push(row);
    });
  }
  return { current, history };
}

describe("the warehouse's parity with the snapshot", () => {
  it("claim lines, runs, run counts and field changes equal the snapshot's, run by run, with typed timestamps", async (ctx) => {
    const url = await pg.freshDatabase(ctx);
    const t = setup();
    const ids = await runs(t);
    // The snapshot's own view numbers the lines from 1: the base the warehouse must share.
    expect(t.db.prepare("SELECT MIN(line_no) FROM claim_lines").pluck().get()).toBe(1);
    for (const r of ids) {
      const o = await deliverToSink(t.db, postgresSink(url), r);
      expect(o.status, JSON.stringify(o.error)).toBe("delivered");
      const want = snapshotLines(t.db, r);
      const cur = await pg.query(url, "SELECT claim_id, line_no::text, code, amount::text FROM benefits_sync.claim_lines");
      expect(lines(cur), `run ${r}`).toEqual(lines(want.current));
      const hist = await pg.query(url, "SELECT claim_id, line_no::text, code, amount::text, valid_from_run::text, valid_to_run::text FROM benefits_sync.claim_lines_history");
      expect(lines(hist), `run ${r}`).toEqual(lines(want.history));

      const runsThere = await pg.query(url, "SELECT run_id::text, job, status, started_at::text, finished_at::text, resources, claims_from::text, claims_to::text FROM benefits_sync.runs");
      const runsHere = t.db.prepare("SELECT run_id, job, status, started_at, finished_at, options FROM runs WHERE run_id <= ?").all(r) as Row[];
      expect(lines(runsThere.map((x) => ({ ...x, started_at: instant(x.started_at), finished_at: instant(x.finished_at) })))).toEqual(
        lines(
          runsHere.map((x) => {
            const o = JSON.parse(String(x.options)) as { resources: string[]; claimsWindow: { from: string; to: string } };
            return { run_id: String(x.run_id), job: x.job, status: x.status, started_at: instant(x.started_at), finished_at: instant(x.finished_at), resources: o.resources, claims_from: o.claimsWindow.from, claims_to: o.claimsWindow.to };
          }),
        ),
      );
      const countsThere = await pg.query(url, "SELECT run_id::text, resource, seen::text, inserted::text, updated::text, deleted::text, unchanged::text, quarantined::text FROM benefits_sync.run_counts");
      const countsHere = (t.db.prepare("SELECT * FROM run_counts WHERE run_id <= ?").all(r) as Row[]).map((x) => Object.fromEntries(Object.entries(x).map(([k, v]) => [k, k === "resource" ? v : String(v)])));
      expect(lines(countsThere)).toEqual(lines(countsHere));

      const changesThere = await pg.query(url, "SELECT run_id::text, resource, id, field, column_name, old_value, new_value FROM benefits_sync.field_changes");
      const changesHere = (t.db.prepare("SELECT * FROM field_changes WHERE run_id <= ?").all(r) as Row[]).map((x) => ({
        ...x,
        run_id: String(x.run_id),
        // SQLite gives a changed object as JSON text, PostgreSQL as jsonb: both as values here.
        old_value: typeof x.old_value === "string" && /^[[{]/.test(x.old_value) ? JSON.parse(x.old_value) : x.old_value,
        new_value: typeof x.new_value === "string" && /^[[{]/.test(x.new_value) ? JSON.parse(x.new_value) : x.new_value,
      }));
      expect(lines(changesThere), `run ${r}`).toEqual(lines(changesHere));
    }
    // Loaded all at once (one load of three runs: the staged path from an empty warehouse), the same.
    const all = `${url}&schema=all_at_once`;
    expect((await deliverToSink(t.db, postgresSink(all), ids[2]!)).status).toBe("delivered");
    for (const table of ["claim_lines", "claim_lines_history", "field_changes", "runs", "run_counts"]) {
      const one = await pg.query(url, `SELECT * FROM benefits_sync.${table}`);
      const other = await pg.query(all, `SELECT * FROM all_at_once.${table}`);
      expect(lines(other), table).toEqual(lines(one));
      expect(one.length, table).toBeGreaterThan(0);
    }
    // The run of the second sync changed a name, an address (an object), lines and an amount.
    const fields = await pg.query<{ field: string }>(url, "SELECT field FROM benefits_sync.field_changes WHERE run_id = $1 ORDER BY field", [ids[1]]);
    expect(fields.map((f) => f.field)).toEqual(expect.arrayContaining(["address.city", "firstName", "lines", "paidAmount"]));

    const types = await pg.query<{ t: string; c: string; d: string }>(
      url,
      "SELECT table_name AS t, column_name AS c, data_type AS d FROM information_schema.columns WHERE table_schema = 'benefits_sync'",
    );
    const typeOf = (tbl: string, col: string) => types.find((x) => x.t === tbl && x.c === col)?.d;
    for (const tbl of ["members", "members_closed", "members_history", "claims", "groups"]) expect(typeOf(tbl, "createdAt"), tbl).toBe("timestamp with time zone");
    expect(typeOf("runs", "started_at")).toBe("timestamp with time zone");
    expect(typeOf("runs", "finished_at")).toBe("timestamp with time zone");
    expect(typeOf("claims", "serviceDateFrom")).toBe("date");
    expect(typeOf("claim_lines", "amount")).toBe("numeric");
    expect(typeOf("claim_lines", "line_no")).toBe("integer");
    const created = await pg.query<{ c: string }>(url, "SELECT (\"createdAt\" AT TIME ZONE 'UTC')::text AS c FROM benefits_sync.members WHERE id = 'm1'");
    expect(created).toEqual([{ c: "2026-01-05 10:00:00" }]);
  });

  it("a createdAt that is not a timestamp is NULL in its typed column, kept in data, and stops nothing", async (ctx) => {
    const url = await pg.freshDatabase(ctx);
    const t = setup();
    const d = baseData();
    (d.members[0] as Row).createdAt = "yesterday";
    (d.members[1] as Row).createdAt = "2026-02-30T10:00:00Z";
    (d.members[2] as Row).createdAt = "2026-02-03T10:00:00+02:00";
    const r = await runSync(t, d);
    expect((await deliverToSink(t.db, postgresSink(url), r.runId)).status).toBe("delivered");
    const rows = await pg.query<{ id: string; c: string | null; raw: string }>(
      url,
      "SELECT id, (\"createdAt\" AT TIME ZONE 'UTC')::text AS c, data->>'createdAt' AS raw FROM benefits_sync.members ORDER BY id",
    );
    expect(rows).toEqual([
      { id: "m1", c: null, raw: "yesterday" },
      { id: "m2", c: null, raw: "2026-02-30T10:00:00Z" },
      { id: "m3", c: "2026-02-03 08:00:00", raw: "2026-02-03T10:00:00+02:00" },
    ]);
  });

  it("a warehouse of the previous layout (2) is refused with what to do, and left as it was", async (ctx) => {
    const url = await pg.freshDatabase(ctx);
    const t = setup();
    const [r1] = await runs(t);
    // What the previous benefits-sync left: its tables, its ledger, and `layout` 2 in _meta.
    await pg.query(url, "CREATE SCHEMA benefits_sync; CREATE TABLE benefits_sync._meta (key text PRIMARY KEY, value text NOT NULL)");
    await pg.query(url, "INSERT INTO benefits_sync._meta VALUES ('layout', '2'), ('snapshot_id', 'x'); CREATE TABLE benefits_sync._loads (run_id bigint PRIMARY KEY)");
    await pg.query(url, "CREATE TABLE benefits_sync.claims (id text PRIMARY KEY, \"createdAt\" text, data jsonb NOT NULL)");
    const refused = await deliverToSink(t.db, postgresSink(url), r1!);
    expect(refused.status).toBe("failed");
    expect(refused.error?.message).toMatch(/layout 2.*this one writes layout 3.*schema=NAME.*DROP SCHEMA "benefits_sync" CASCADE/);
    const tables = await pg.query<{ t: string }>(url, "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'benefits_sync' ORDER BY 1");
    expect(tables.map((x) => x.t)).toEqual(["_loads", "_meta", "claims"]);
    expect(await pg.query(url, "SELECT key, value FROM benefits_sync._meta ORDER BY key")).toEqual([
      { key: "layout", value: "2" },
      { key: "snapshot_id", value: "x" },
    ]);
  });
});
