/**
 * The analyst's guide's questions in their Postgres form (the README's own two beside their SQLite
 * form, the rest in docs/analyst-guide.md, "In the Postgres warehouse"), run as printed against a
 * warehouse the sink loads from a snapshot synced from the sandbox, run by run: after each load
 * every question gives the answer its SQLite form gives on the snapshot (the SQLite answers are
 * themselves checked against the sandbox's data by guide.test.ts), for every run so far where it
 * takes a run. A question without its Postgres form (or a form without its question) fails, and so
 * does SQL printed in the README that no test runs: every ```sql block there is a named question
 * or Postgres form, and the statements in its prose run on the loaded warehouse as printed.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, describe, expect, it, type TestContext } from "vitest";
import { createClient } from "../../../src/api/client.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { postgresSink } from "../../../src/sinks/postgres/postgres-sink.js";
import { deliverToSink } from "../../../src/sinks/sink.js";
import { canonical } from "../../helpers/canonical.js";
import { usePostgres } from "../../helpers/pg.js";
import { ALL_CLAIMS } from "../../helpers/sandbox-truth.js";
import { syncStarted, tempStore, type TempStore } from "../../helpers/temp-store.js";

const text = (rel: string): string => readFileSync(fileURLToPath(new URL(rel, import.meta.url)), "utf8");

/** Every ```sql block in `source`. */
const sqlBlocks = (source: string): string[] => [...source.matchAll(/^```sql\r?\n([\s\S]*?)^```/gm)].map((m) => m[1]!);

/**
 * Every ```sql block that a leading comment line names `-- <marker>: NAME`, by name (a block the
 * same in both engines carries both markers).
 */
function blocks(source: string, marker: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const sql of sqlBlocks(source)) {
    const name = new RegExp(`^(?:--.*\\r?\\n)*?-- ${marker}: ([a-z0-9]+(?:-[a-z0-9]+)*)\\s*\\r?\\n`).exec(sql)?.[1];
    if (name === undefined) continue;
    if (out.has(name)) throw new Error(`${marker} ${name} appears twice`);
    out.set(name, sql);
  }
  return out;
}

const readme = text("../../../README.md");
const guide = text("../../../docs/analyst-guide.md");
const sqlite = blocks(`${readme}\n${guide}`, "question");
const postgres = blocks(`${readme}\n${guide}`, "postgres");

/** The warehouse's page, where the README's Postgres prose moved. */
const sinks = text("../../../docs/sinks.md");

/** A page's prose (fenced blocks left out), its lines joined as Markdown joins them. */
const proseOf = (page: string): string => {
  let fence = false;
  return page
    .split("\n")
    .filter((l) => {
      if (l.trimStart().startsWith("```")) fence = !fence;
      return !fence && !l.trimStart().startsWith("```");
    })
    .join(" ");
};
/** The SQL statements printed in the prose (`SELECT ...`, `SET ...`) of the README and of the pages its SQL moved to, as printed. */
const proseStatements = (): string[] => [readme, sinks, guide].flatMap((page) => [...proseOf(page).matchAll(/`((?:SELECT|SET|WITH)\b[^`]*)`/g)].map((m) => m[1]!));

type Row = Record<string, unknown>;

/** psql's `:name` and `:'name'` as numbered parameters; the names in order. */
function numbered(sql: string): { sql: string; names: string[] } {
  const names: string[] = [];
  const out = sql.replace(/(?<!:):(?:'(\w+)'|(\w+))/g, (_m, quoted: string | undefined, raw: string | undefined) => {
    const name = (quoted ?? raw)!;
    if (!names.includes(name)) names.push(name);
    return `$${names.indexOf(name) + 1}`;
  });
  return { sql: out, names };
}


/**
 * One value as both engines can agree on it: an instant in ISO 8601 UTC, a decimal without
 * trailing zeros, a count as text, JSON (a jsonb value; SQLite's JSON text of an object or list) canonical.
 */
function value(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === "number" || typeof v === "bigint") return decimal(String(v));
  if (typeof v === "object") return canonical(v);
  const s = String(v);
  if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}/.test(s)) return new Date(s.replace(" ", "T").replace(/\+00$/, "Z")).toISOString();
  if (/^-?\d+(\.\d+)?$/.test(s)) return decimal(s);
  if (/^[[{]/.test(s)) {
    try {
      return canonical(JSON.parse(s));
    } catch {
      return s;
    }
  }
  return s;
}
const decimal = (s: string): string => (s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s);
const rows = (rs: Row[]): Row[] => rs.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, value(v)])));

const pgHandle = usePostgres();
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

interface World {
  sb: Sandbox;
  t: TempStore;
  url: string;
  sync(): Promise<number>;
  runs: number[];
}
let made: Promise<World> | undefined;
function world(ctx: TestContext): Promise<World> {
  made ??= (async () => {
    const url = await pgHandle.freshDatabase(ctx);
    const sb = await startSandbox({ members: 300, seed: 12, groups: 3, inconsistencies: true });
    const client = createClient({ baseUrl: sb.baseUrl, apiKey: sb.keys.full, retry: { maxAttempts: 6, baseMs: 5, capMs: 50, retryAfterCapMs: 1000 } });
    const t = tempStore();
    cleanups.push(() => sb.close(), () => client.close(), () => t.cleanup());
    const w: World = {
      sb,
      t,
      url,
      runs: [],
      async sync() {
        const r = await syncStarted({ source: client, store: t.store, claimsWindow: ALL_CLAIMS });
        expect(r.status).toBe("succeeded");
        const o = await deliverToSink(t.db, postgresSink(url), r.runId);
        expect(o.status, JSON.stringify(o.error)).toBe("delivered");
        w.runs.push(r.runId);
        return r.runId;
      },
    };
    return w;
  })();
  return made;
}

/** Rows answered per question, over every comparison: an empty answer compared proves little. */
const answered = new Map<string, number>();

/** Every question asked both ways, for every parameter value this point of the history offers. */
async function compareAll(w: World): Promise<number> {
  const db = w.t.db;
  const member = db.prepare("SELECT memberId FROM claims GROUP BY memberId ORDER BY COUNT(*) DESC, memberId LIMIT 1").pluck().get() as string;
  const claim = db.prepare("SELECT id FROM claims_history GROUP BY id ORDER BY COUNT(*) DESC, id LIMIT 1").pluck().get() as string;
  const values: Record<string, unknown[]> = { run_id: w.runs, member_id: [member], claim_id: [claim] };
  const c = new pg.Client({
    connectionString: w.url,
    // Dates and times as PostgreSQL prints them: the comparison reads them as text.
    types: { getTypeParser: ((oid: number, format?: "text" | "binary") => ([1082, 1114, 1184].includes(oid) ? (v: string) => v : pg.types.getTypeParser(oid, format))) as never },
  });
  await c.connect();
  let asked = 0;
  try {
    await c.query("SET search_path TO benefits_sync");
    for (const [name, sqliteSql] of sqlite) {
      const { sql, names } = numbered(postgres.get(name)!);
      const used = [...new Set([...sqliteSql.matchAll(/:(\w+)/g)].map((m) => m[1]!))];
      expect(names.sort(), name).toEqual([...used].sort());
      const combos: Record<string, unknown>[] = [{}];
      for (const p of names) for (const base of combos.splice(0)) for (const v of values[p]!) combos.push({ ...base, [p]: v });
      for (const params of combos) {
        const here = rows(db.prepare(sqliteSql).all(params) as Row[]);
        const there = rows((await c.query(sql, names.map((p) => params[p]))).rows as Row[]);
        expect(there, `${name} ${JSON.stringify(params)}`).toEqual(here);
        answered.set(name, (answered.get(name) ?? 0) + here.length);
        asked++;
      }
    }
  } finally {
    await c.end();
  }
  return asked;
}

describe("the analyst's questions in the Postgres warehouse", () => {
  it("every question has its Postgres form in the guide, and every form a question", () => {
    expect(sqlite.size).toBe(13);
    expect([...postgres.keys()].sort()).toEqual([...sqlite.keys()].sort());
  });

  it("the README prints the Postgres form of each of its own questions, and no SQL block a test does not run", () => {
    const own = blocks(readme, "question");
    expect(own.size).toBeGreaterThanOrEqual(2);
    expect([...blocks(readme, "postgres").keys()].sort()).toEqual([...own.keys()].sort());
    // `-- duckdb:` blocks are run by test/e2e/lake.test.ts (each the same text as a block of docs/lake.md it runs).
    const unnamed = sqlBlocks(readme).filter((sql) => !/^(?:--.*\r?\n)*?-- (?:question|postgres|duckdb): /.test(sql));
    expect(unnamed).toEqual([]);
    // The README's own `SET search_path ...`, and the warehouse page's quoted camelCase `SELECT`.
    expect(proseStatements()).toEqual(expect.arrayContaining(["SET search_path TO benefits_sync;", expect.stringMatching(/^SELECT "memberId"/)]));
  });

  it("after run 1: every answer equals the snapshot's", async (ctx) => {
    const w = await world(ctx);
    await w.sync();
    expect(await compareAll(w)).toBeGreaterThanOrEqual(13);
  });

  it("after runs 2 and 3 (a day of changes each): every answer equals the snapshot's, for every run so far", async (ctx) => {
    const w = await world(ctx);
    for (let i = 0; i < 2; i++) {
      await w.sb.advance();
      await w.sync();
      await compareAll(w);
    }
    // Changes did happen: updates with field changes, and claims with more than one version.
    const changed = w.t.db.prepare("SELECT COUNT(*) FROM field_changes WHERE run_id > ?").pluck().get(w.runs[0]) as number;
    expect(changed).toBeGreaterThan(0);
    expect(w.t.db.prepare("SELECT COUNT(*) FROM claims_history WHERE valid_to_run IS NOT NULL").pluck().get()).toBeGreaterThan(0);
    // Every question had rows to compare at some point.
    expect(Object.fromEntries([...sqlite.keys()].map((q) => [q, (answered.get(q) ?? 0) > 0]))).toEqual(Object.fromEntries([...sqlite.keys()].map((q) => [q, true])));
  });

  it("the statements in the prose of the README, docs/sinks.md and the guide run as printed on the loaded warehouse", async (ctx) => {
    const w = await world(ctx);
    const c = new pg.Client({ connectionString: w.url });
    await c.connect();
    try {
      for (const sql of proseStatements()) {
        const r = await c.query(sql);
        if (/^SELECT\b/.test(sql)) expect(r.rows.length, sql).toBeGreaterThan(0);
      }
    } finally {
      await c.end();
    }
  });
});
