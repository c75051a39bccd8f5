/**
 * `export --state` and `export --history` against the snapshot they come from, read back by DuckDB:
 * the state of the last run equals the SQLite views row for row (dates, instants, cents exact);
 * the state of an earlier run equals the snapshot's as-of answer; the history's "as of run k"
 * (`valid_from_run <= k AND (valid_to_run IS NULL OR valid_to_run > k)`) equals it for every k
 * after simulated days of change; the same run exported twice, before and after later runs,
 * gives the same bytes; bad usage exits 2 and changes nothing.
 */
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitCode } from "../../../src/cli/exit-codes.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { asEpochMicros } from "../../../src/sinks/typed-fields.js";
import { runCli } from "../../unit/cli/run-cli.js";
import { ALL_CLAIMS } from "../../helpers/sandbox-truth.js";

const VIEWS = ["designs", "groups", "plans", "members", "coverages", "claims"] as const;
const HISTORY = ["valid_from_run", "valid_to_run", "valid_from", "valid_to", "is_current", "is_deleted"];
const RUNS = 4;

let sb: Sandbox;
let dir: string;
let env: Record<string, string>;
let duck: DuckDBConnection;
let db: BetterSqlite3.Database;
/** `state --run 2` as written right after run 2, before the later runs. */
let earlyBytes: Record<string, string>;
const window = ["--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to];

const cli = (args: string[]) => runCli(args, { env, cwd: dir });

beforeAll(async () => {
  sb = await startSandbox({ members: 150, groups: 3, seed: 11 });
  dir = mkdtempSync(join(tmpdir(), "bsync-state-"));
  env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(dir, "snap.db"), BENEFITS_PII_KEY: "state-test-pii-key-0123456789" };
  for (let run = 1; run <= RUNS; run++) {
    if (run > 1) await sb.advance();
    expect((await cli(["sync", ...window, "--quiet"])).code).toBe(ExitCode.OK);
    if (run === 2) {
      expect((await cli(["export", "--state", "--run", "2", "--out", "early", "--format", "parquet", "--quiet"])).code).toBe(ExitCode.OK);
      earlyBytes = bytesOf(join(dir, "early", "state-00000002"));
    }
  }
  duck = await (await DuckDBInstance.create(":memory:")).connect();
  db = new BetterSqlite3(env.BENEFITS_DB!, { readonly: true });
}, 120_000);
afterAll(async () => {
  duck?.closeSync();
  db?.close();
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function bytesOf(d: string): Record<string, string> {
  return Object.fromEntries(readdirSync(d).sort().map((f) => [f, readFileSync(join(d, f)).toString("base64")]));
}

type Row = Record<string, unknown>;
const duckRows = async (sql: string): Promise<Row[]> => (await duck.runAndReadAll(sql)).getRowObjectsJson() as Row[];

/** A Parquet column read by DuckDB as a comparable value, by its DuckDB type: dates as text, money as integer cents, instants as epoch microseconds. */
function duckExpr(col: string, type: string): string {
  const c = `"${col}"`;
  if (type === "DATE") return `strftime(${c}, '%Y-%m-%d')`;
  if (type === "DECIMAL(18,2)") return `CAST(${c} * 100 AS BIGINT)::VARCHAR`;
  if (type.startsWith("TIMESTAMP")) return `epoch_us(${c})::VARCHAR`;
  if (type === "JSON") return `CAST(${c} AS VARCHAR)`;
  return `${c}::VARCHAR`;
}

/** The same value from SQLite's view row, by the Parquet column's DuckDB type (money from the view's own `_cents`). */
function sqliteValue(row: Row, col: string, type: string): unknown {
  const v = row[col];
  if (v === null || v === undefined) return null;
  if (type === "DECIMAL(18,2)") return row[`${col}_cents`] === null ? null : String(row[`${col}_cents`]);
  if (type.startsWith("TIMESTAMP")) return String(asEpochMicros(v));
  if (type === "JSON") return JSON.stringify(JSON.parse(v as string));
  return String(v);
}

/** Read `file` with DuckDB (optionally filtered) and compare with SQLite rows, column for column, ordered by `key`. */
async function expectSameRows(file: string, sqliteRows: Row[], key: string[], where = ""): Promise<number> {
  const described = await duckRows(`DESCRIBE SELECT * FROM read_parquet('${file}')`);
  const types = new Map(described.map((d) => [String(d.column_name), String(d.column_type)]));
  const cols = [...types.keys()].filter((c) => !HISTORY.includes(c));
  const got = await duckRows(`SELECT ${cols.map((c) => `${duckExpr(c, types.get(c)!)} AS "${c}"`).join(", ")} FROM read_parquet('${file}') ${where} ORDER BY ${key.map((k) => `"${k}"`).join(", ")}`);
  const sortKey = (r: Row) => key.map((k) => String(r[k]).padStart(12, "0")).join("\u0000");
  const want = [...sqliteRows].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0)).map((r) => Object.fromEntries(cols.map((c) => [c, sqliteValue(r, c, types.get(c)!)])));
  const normal = got.map((r) => Object.fromEntries(cols.map((c) => [c, types.get(c) === "JSON" && r[c] !== null ? JSON.stringify(JSON.parse(r[c] as string)) : r[c]])));
  expect(normal, file).toEqual(want);
  return got.length;
}

/** The view's columns (what the state file must hold): every one but the `_cents` ones, which the DECIMAL holds exactly. */
const viewColumns = (view: string): string[] =>
  (db.prepare(`SELECT name FROM pragma_table_info('${view}')`).pluck().all() as string[]).filter((c) => !c.endsWith("_cents"));

/** The claim lines as of run k, from the claims' own JSON (each line's code and amount). */
function linesAsOf(k: number): Row[] {
  const claims = db.prepare(`SELECT id, memberId, groupId, serviceDateFrom, d.data FROM _claims_v v JOIN _claims_d d ON d.vid = v.vid WHERE valid_from_run <= ? AND (valid_to_run IS NULL OR valid_to_run > ?)`).all(k, k) as Row[];
  return claims.flatMap((c) =>
    ((JSON.parse(c.data as string) as { lines?: { code?: string; amount?: string }[] }).lines ?? []).map((l, i) => ({
      claim_id: c.id, line_no: i + 1, memberId: c.memberId, groupId: c.groupId, serviceDateFrom: c.serviceDateFrom, code: l.code ?? null, amount: l.amount ?? null,
      amount_cents: l.amount === undefined ? null : String(Math.round(Number(l.amount) * 100)),
    })),
  );
}

describe("export --state", () => {
  it("writes every view of the last run; DuckDB reads back the SQLite views row for row, cents exact", async () => {
    const r = await cli(["export", "--state", "--run", String(RUNS), "--out", "exports", "--format", "parquet", "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(ExitCode.OK);
    const folder = join(dir, "exports", `state-0000000${RUNS}`);
    expect(JSON.parse(r.stdout.trim().split("\n").pop()!)).toMatchObject({ kind: "state", runId: RUNS, format: "parquet", dir: folder });
    const manifest = JSON.parse(readFileSync(join(folder, "manifest.json"), "utf8")) as { kind: string; runId: number; files: { file: string; rows: number; sha256: string }[] };
    expect(manifest.files.map((f) => f.file)).toEqual([...VIEWS, "claim_lines"].map((v) => `${v}.parquet`));
    let compared = 0;
    for (const view of VIEWS) {
      const file = join(folder, `${view}.parquet`);
      const described = await duckRows(`DESCRIBE SELECT * FROM read_parquet('${file}')`);
      expect(described.map((d) => d.column_name), view).toEqual(viewColumns(view));
      const rows = db.prepare(`SELECT * FROM "${view}"`).all() as Row[];
      expect(rows.length, view).toBeGreaterThan(0);
      expect(manifest.files.find((f) => f.file === `${view}.parquet`)!.rows).toBe(rows.length);
      compared += await expectSameRows(file, rows, ["id"]);
    }
    const lines = db.prepare(`SELECT claim_id, line_no, memberId, groupId, serviceDateFrom, code, amount, amount_cents FROM claim_lines`).all() as Row[];
    expect(lines.length).toBeGreaterThan(0);
    compared += await expectSameRows(join(folder, "claim_lines.parquet"), lines, ["claim_id", "line_no"]);
    // Money is exact: the sum of cents equals SQLite's integer sum.
    const [paid] = await duckRows(`SELECT CAST(SUM(paidAmount) * 100 AS BIGINT)::VARCHAR AS c FROM read_parquet('${join(folder, "claims.parquet")}')`);
    expect(paid!.c).toBe(String(db.prepare("SELECT SUM(paidAmount_cents) FROM claims").pluck().get()));
    expect(compared).toBeGreaterThan(500);
  });

  it("an earlier run gives the snapshot's as-of answer, the same bytes before and after later runs", async () => {
    for (const k of [1, 2, 3]) {
      const r = await cli(["export", "--state", "--run", String(k), "--out", "asof", "--format", "parquet", "--quiet"]);
      expect(r.code, r.stderr).toBe(ExitCode.OK);
      const folder = join(dir, "asof", `state-0000000${k}`);
      for (const view of VIEWS) {
        const rows = db.prepare(`SELECT v.*, d.hash, d.data FROM _${view}_v v JOIN _${view}_d d ON d.vid = v.vid WHERE valid_from_run <= ? AND (valid_to_run IS NULL OR valid_to_run > ?)`).all(k, k) as Row[];
        await expectSameRows(join(folder, `${view}.parquet`), rows, ["id"]);
      }
      await expectSameRows(join(folder, "claim_lines.parquet"), linesAsOf(k), ["claim_id", "line_no"]);
    }
    expect(bytesOf(join(dir, "asof", "state-00000002"))).toEqual(earlyBytes);
    const again = await cli(["export", "--state", "--run", "2", "--out", "asof", "--format", "parquet", "--quiet"]);
    expect(again.code).toBe(ExitCode.OK);
    expect(bytesOf(join(dir, "asof", "state-00000002"))).toEqual(earlyBytes);
  });

  it("CSV and JSON Lines carry the view's columns and rows; without --run, the latest run that succeeded", async () => {
    expect((await cli(["export", "--state", "--out", "text", "--quiet"])).code).toBe(ExitCode.OK);
    expect((await cli(["export", "--state", "--out", "lines", "--format", "jsonl", "--quiet"])).code).toBe(ExitCode.OK);
    const folder = join(dir, "text", `state-0000000${RUNS}`);
    const csv = JSON.parse(readFileSync(join(folder, "manifest.json"), "utf8")) as { format: string; files: { file: string; rows: number }[] };
    expect(csv.format).toBe("csv");
    const members = db.prepare("SELECT * FROM members ORDER BY id").all() as Row[];
    expect(csv.files.find((f) => f.file === "members.csv")!.rows).toBe(members.length);
    const header = readFileSync(join(folder, "members.csv"), "utf8").split("\r\n")[0]!;
    expect(header.split(",")).toEqual(viewColumns("members"));
    const jsonl = readFileSync(join(dir, "lines", `state-0000000${RUNS}`, "claims.jsonl"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as Row);
    const claims = db.prepare("SELECT * FROM claims").all() as Row[];
    expect(jsonl.map((r) => r.id).sort()).toEqual(claims.map((c) => c.id).sort());
    const byId = new Map(claims.map((c) => [c.id, c]));
    for (const r of jsonl) {
      const c = byId.get(r.id)!;
      expect(Object.keys(r)).toEqual(viewColumns("claims"));
      expect([r.paidAmount, r.serviceDateFrom, r.data]).toEqual([c.paidAmount, c.serviceDateFrom, JSON.parse(c.data as string)]);
    }
  });

  it("refuses bad usage with exit 2 and writes nothing: both kinds, --sink, an unknown run, no --out", async () => {
    const cases: [string[], RegExp][] = [
      [["--state", "--history", "--out", "bad"], /--state and --history: give one/],
      [["--state", "--sink", "postgres://u@h/db", "--out", "bad"], /--sink: --state writes files under a folder/],
      [["--history", "--run", "99", "--out", "bad"], /no run 99/],
      [["--state", "--run", "1"], /--out: the directory/],
      [["--history", "--from-run", "1", "--out", "bad"], /--from-run: --history writes one folder/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(["export", ...args]);
      expect(r.code, args.join(" ")).toBe(ExitCode.USAGE);
      expect(r.stderr, args.join(" ")).toMatch(message);
    }
    expect(existsSync(join(dir, "bad"))).toBe(false);
  });

  it("refuses, exit 1, a folder of that name it did not write, and leaves it and no hidden folder behind", async () => {
    mkdirSync(join(dir, "taken", "state-00000001"), { recursive: true });
    writeFileSync(join(dir, "taken", "state-00000001", "notes.txt"), "mine");
    const r = await cli(["export", "--state", "--run", "1", "--out", "taken"]);
    expect(r.code).toBe(ExitCode.RUN_FAILED);
    expect(r.stderr).toMatch(/state-00000001 exists and is not a state export of run 1/);
    expect(readdirSync(join(dir, "taken"))).toEqual(["state-00000001"]);
    expect(readFileSync(join(dir, "taken", "state-00000001", "notes.txt"), "utf8")).toBe("mine");
  });
});

describe("export --history", () => {
  it("as of run k (valid_from_run <= k AND (valid_to_run IS NULL OR valid_to_run > k)) equals the snapshot's as-of answer, for every k", async () => {
    const r = await cli(["export", "--history", "--run", String(RUNS), "--out", "history", "--format", "parquet", "--quiet"]);
    expect(r.code, r.stderr).toBe(ExitCode.OK);
    const folder = join(dir, "history", `history-0000000${RUNS}`);
    let changed = 0;
    for (const view of VIEWS) {
      const file = join(folder, `${view}.parquet`);
      const described = await duckRows(`DESCRIBE SELECT * FROM read_parquet('${file}')`);
      expect(described.map((d) => d.column_name), view).toEqual([...viewColumns(view), ...HISTORY]);
      expect(described.filter((d) => HISTORY.includes(String(d.column_name))).map((d) => d.column_type)).toEqual(["BIGINT", "BIGINT", "TIMESTAMP WITH TIME ZONE", "TIMESTAMP WITH TIME ZONE", "BOOLEAN", "BOOLEAN"]);
      for (let k = 1; k <= RUNS; k++) {
        const rows = db.prepare(`SELECT v.*, d.hash, d.data FROM _${view}_v v JOIN _${view}_d d ON d.vid = v.vid WHERE valid_from_run <= ? AND (valid_to_run IS NULL OR valid_to_run > ?)`).all(k, k) as Row[];
        await expectSameRows(file, rows, ["id"], `WHERE valid_from_run <= ${k} AND (valid_to_run IS NULL OR valid_to_run > ${k})`);
      }
      // Current: is_current is the last run's state; a deleted record's last version says so.
      const current = await duckRows(`SELECT id FROM read_parquet('${file}') WHERE is_current ORDER BY id`);
      expect(current.map((x) => x.id)).toEqual(db.prepare(`SELECT id FROM "${view}" ORDER BY id`).pluck().all());
      const deleted = await duckRows(`SELECT id, valid_to_run::INTEGER AS run FROM read_parquet('${file}') WHERE is_deleted ORDER BY run, id`);
      expect(deleted.map((x) => [x.id, x.run])).toEqual(db.prepare(`SELECT id, valid_to_run FROM _${view}_v WHERE ended_by = 'delete' ORDER BY valid_to_run, id`).raw().all());
      changed += (await duckRows(`SELECT id FROM read_parquet('${file}') WHERE valid_from_run > 1`)).length;
    }
    expect(changed, "the simulated days changed records").toBeGreaterThan(10);
    const lines = join(folder, "claim_lines.parquet");
    for (let k = 1; k <= RUNS; k++) await expectSameRows(lines, linesAsOf(k), ["claim_id", "line_no"], `WHERE valid_from_run <= ${k} AND (valid_to_run IS NULL OR valid_to_run > ${k})`);
    // The runs' times: valid_from is the start of the run that recorded the version.
    const starts = await duckRows(`SELECT DISTINCT valid_from_run::INTEGER AS run, epoch_us(valid_from)::VARCHAR AS t FROM read_parquet('${join(folder, "members.parquet")}') ORDER BY run`);
    for (const s of starts) expect(s.t).toBe(String(asEpochMicros(db.prepare("SELECT started_at FROM runs WHERE run_id = ?").pluck().get(s.run))));
  });

  it("up to an earlier run: a version replaced later is still current, and no later version is there", async () => {
    const r = await cli(["export", "--history", "--run", "2", "--out", "history", "--format", "parquet", "--quiet"]);
    expect(r.code, r.stderr).toBe(ExitCode.OK);
    const file = join(dir, "history", "history-00000002", "members.parquet");
    const [late] = await duckRows(`SELECT COUNT(*)::INTEGER AS n FROM read_parquet('${file}') WHERE valid_from_run > 2 OR valid_to_run > 2`);
    expect(late!.n).toBe(0);
    const current = await duckRows(`SELECT id FROM read_parquet('${file}') WHERE is_current ORDER BY id`);
    expect(current.map((x) => x.id)).toEqual(db.prepare("SELECT id FROM _members_v WHERE valid_from_run <= 2 AND (valid_to_run IS NULL OR valid_to_run > 2) ORDER BY id").pluck().all());
  });
});
