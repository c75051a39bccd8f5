/**
 * The sinks section of `npm run bench` (BENCH_ONLY=sinks runs it alone), on two runs of claim
 * deltas: run 1, a first sync of groups and claims (~300,000 claims, all inserts), and run 2, a
 * sync of the same service in which BENCH_SINK_UPDATE_SHARE (0.5) of the claims come back
 * changed (status and adjudication date; for a third of them a line's amount too), so that most
 * of its rows are updates carrying `changed_fields` and field changes. Each run is measured:
 *
 * - loaded into Postgres by the sink, against `psql` in the same cluster doing the same work the
 *   plainest way. Run 1: `\copy` of the rows the sink's claims table gets (op and changed_fields
 *   included) and of the claims' lines (the sink derives them in the database) into bare tables of
 *   the sink's columns, then their keys and indexes built (faster than copying into indexed
 *   tables). Run 2, on top of run 1: `\copy` of the changed claims and their lines into staging
 *   tables and of the run's field changes (the rows the sink's field_changes gets), then, in one
 *   transaction, the changed claims' current versions and lines moved to the closed tables and
 *   replaced by the new ones. Both sides are checked to hold the same number of rows in every
 *   table after each run.
 * - exported as CSV, against a bare csv-stringify of the same rows to files (op and the changed
 *   field paths in column order included), both checked to write as many claim and line rows.
 *
 * Each pair alternates BENCH_SINK_REPEAT times (3); the medians' ratio is the speed of ours
 * relative to the baseline (bar: at least 0.7).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { IndexedColumns } from "../src/store/schema/analyst-schema.js";
import { columnName } from "../src/store/schema/resources.js";
import { DEFAULT_SCHEMA } from "../src/sinks/postgres/connection.js";
import { warehouseColumns } from "../src/sinks/postgres/warehouse-schema.js";
import type { Report, Worker } from "./analyst.js";
import { pgBinDir, startPgCluster, type PgCluster } from "./pg-cluster.js";

const here = dirname(fileURLToPath(import.meta.url));
const sinksJs = join(here, "sinks-worker.js");

function sinksWorker(args: string[]): Record<string, number | string> {
  const r = spawnSync(process.execPath, [sinksJs, ...args], { encoding: "utf8", maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`sinks worker ${args[0]} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as Record<string, number | string>;
}

type Start = (args: string[]) => Promise<{ baseUrl: string; key: string; stop: () => Promise<void> }>;

export interface SinksOptions {
  readonly members: number;
  readonly groups: number;
  readonly claimsPerMember: number;
  readonly repeat: number;
  /** The share (0-1) of the claims the second run changes. */
  readonly updateShare: number;
  readonly window: { from: string; to: string };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** The runs measured: 1 (inserts) and 2 (mostly updates), and what each is called in the report. */
const RUNS = [
  { run: 1, what: "run 1 (inserts)" },
  { run: 2, what: "run 2 (mostly updates, with changed_fields)" },
] as const;

export async function sinksSection(dir: string, o: SinksOptions, startSandbox: Start, worker: Worker, report: Report): Promise<void> {
  const db = join(dir, "sinks.db");
  const sb = await startSandbox(["--members", String(o.members), "--groups", String(o.groups), "--claims-per-member", String(o.claimsPerMember)]);
  try {
    const first = worker(["sync", sb.baseUrl, sb.key, o.window.from, o.window.to, db, "groups,claims"]);
    if (first.status !== "succeeded") throw new Error(`the sinks section's first sync failed: ${first.error}`);
    const second = sinksWorker(["sync-updates", sb.baseUrl, sb.key, o.window.from, o.window.to, db, String(o.updateShare)]);
    if (second.status !== "succeeded") throw new Error(`the sinks section's sync of updates failed: ${second.error}`);
    if (Number(second.updated) === 0) throw new Error("the sinks section's second run updated no claim");
    console.log(`  sinks: run 2 updated ${second.updated} claims and inserted ${second.inserted}`);
  } finally {
    await sb.stop();
  }
  try {
    for (const { run, what } of RUNS) csvPair(dir, db, run, what, o.repeat, report);
    await postgresPairs(dir, db, o.repeat, report);
  } finally {
    rmSync(db, { force: true });
  }
}

/** CSV: our export of `run` against a bare csv-stringify of the same rows. */
function csvPair(dir: string, db: string, run: number, what: string, repeat: number, report: Report): void {
  const ours: number[] = [];
  const bare: number[] = [];
  let rows = 0;
  for (let i = 0; i < repeat; i++) {
    const b = sinksWorker(["csv-bare", db, String(run), join(dir, `bare-${i}`)]);
    bare.push(Number(b.ms));
    const e = sinksWorker(["csv-export", db, String(run), join(dir, `export-${i}`)]);
    ours.push(Number(e.ms));
    rows = Number(e.rows);
    // The same work: as many claim rows and line rows on both sides.
    if (Number(b.rows) !== rows || Number(b.lines) !== Number(e.lines)) {
      throw new Error(`the CSV baseline is not the same work for run ${run}: ${b.rows} claims and ${b.lines} lines, the export's ${e.rows} and ${e.lines}`);
    }
    rmSync(join(dir, `export-${i}`), { recursive: true, force: true });
    for (const f of [`bare-${i}.claims.csv`, `bare-${i}.lines.csv`]) rmSync(join(dir, f), { force: true });
  }
  const ratio = median(bare) / median(ours);
  report(
    `CSV export of ${rows} claim deltas, ${what}, vs bare csv-stringify of the same rows`,
    `${ratio.toFixed(3)} of its speed (${secs(median(ours))} vs ${secs(median(bare))})`,
    ">= 0.7",
    ratio >= 0.7,
  );
}

/** Every table both sides fill, by its name in the sink's schema and in the baseline's database. */
const SAME_TABLES = ["claims", "claims_closed", "claim_lines", "claim_lines_closed", "field_changes"] as const;

/** Postgres: the sink's loads of run 1, then of run 2, against psql doing the same, in one cluster with PostgreSQL's defaults. */
async function postgresPairs(dir: string, db: string, repeat: number, report: Report): Promise<void> {
  const cluster = await startPgCluster({ durable: true });
  try {
    const files = RUNS.map(({ run }) => {
      const file = join(dir, `claims-rows-${run}.csv`);
      sinksWorker(["pg-csv", db, String(run), file]);
      return file;
    });
    const psql = existsSync(join(pgBinDir() ?? "", "psql")) ? join(pgBinDir()!, "psql") : "psql";
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    const loads: number[][] = RUNS.map(() => []);
    const copies: number[][] = RUNS.map(() => []);
    const loaded: number[] = RUNS.map(() => 0);
    try {
      for (let i = 0; i < repeat; i++) {
        await admin.query(`CREATE DATABASE base${i}`);
        await admin.query(`CREATE DATABASE ours${i}`);
        await baselineTables(cluster, `base${i}`);
        for (const [k, { run }] of RUNS.entries()) {
          const script = k === 0 ? firstRunScript(files[k]!) : updateRunScript(files[k]!, run);
          const t0 = performance.now();
          execFileSync(psql, ["-h", cluster.socketDir, "-U", "postgres", "-d", `base${i}`, "-v", "ON_ERROR_STOP=1", "--single-transaction", ...script.flatMap((c) => ["-c", c])], { stdio: "pipe" });
          copies[k]!.push(performance.now() - t0);
          const l = sinksWorker(["pg-load", db, cluster.url.replace("/postgres?", `/ours${i}?`), String(run)]);
          loads[k]!.push(Number(l.ms));
          loaded[k] = Number(l.rows);
          await sameRows(cluster, i, run);
        }
      }
    } finally {
      await admin.end();
    }
    for (const [k, { what }] of RUNS.entries()) {
      const ratio = median(copies[k]!) / median(loads[k]!);
      report(
        `Postgres load of ${loaded[k]} claim deltas, ${what}, and their lines and field changes (versions closed, ledger; one transaction) vs psql doing the same to the same tables with \\copy and plain SQL`,
        `${ratio.toFixed(3)} of its speed (${secs(median(loads[k]!))} vs ${secs(median(copies[k]!))})`,
        ">= 0.7",
        ratio >= 0.7,
      );
    }
  } finally {
    await cluster.stop();
  }
}

/** The claim columns of the sink's tables, typed as there. */
const claimCols = () => warehouseColumns("claims").map((c) => `${c.name} ${c.type}`).join(", ");
const lineCols = `claim_id text NOT NULL, line_no integer NOT NULL, "memberId" text, "groupId" text, "serviceDateFrom" date, code text, amount numeric, valid_from_run bigint NOT NULL`;

/** The baseline's tables, bare (no key, no index): the sink's columns, in the order pg-csv writes them. */
async function baselineTables(cluster: PgCluster, database: string): Promise<void> {
  const c = new pg.Client({ connectionString: cluster.url.replace("/postgres?", `/${database}?`) });
  await c.connect();
  try {
    await c.query(`CREATE TABLE claims (id text NOT NULL, ${claimCols()}, data jsonb NOT NULL, valid_from_run bigint NOT NULL, op text NOT NULL, changed_fields jsonb)`);
    await c.query(`CREATE TABLE claims_closed (id text NOT NULL, ${claimCols()}, data jsonb NOT NULL, valid_from_run bigint NOT NULL, op text NOT NULL, changed_fields jsonb, valid_to_run bigint NOT NULL)`);
    await c.query(`CREATE TABLE claim_lines (${lineCols})`);
    await c.query(`CREATE TABLE claim_lines_closed (${lineCols}, valid_to_run bigint NOT NULL)`);
    await c.query(`CREATE TABLE field_changes (run_id bigint NOT NULL, resource text NOT NULL, id text NOT NULL, field text NOT NULL, column_name text, old_value jsonb, new_value jsonb)`);
  } finally {
    await c.end();
  }
}

/** Run 1 as psql: \copy into the bare tables, then every key and index the sink's tables have. */
function firstRunScript(file: string): string[] {
  return [
    `\\copy claims FROM '${file}' WITH (FORMAT csv, HEADER true)`,
    `\\copy claim_lines FROM '${file}.lines.csv' WITH (FORMAT csv, HEADER true)`,
    `\\copy field_changes FROM '${file}.fc.csv' WITH (FORMAT csv, HEADER true)`,
    [
      "ALTER TABLE claims ADD PRIMARY KEY (id)",
      ...IndexedColumns.claims.map((c) => `CREATE INDEX ON claims ("${columnName(c)}")`),
      "ALTER TABLE claims_closed ADD PRIMARY KEY (id, valid_from_run)",
      "ALTER TABLE claim_lines ADD PRIMARY KEY (claim_id, line_no)",
      "ALTER TABLE claim_lines_closed ADD PRIMARY KEY (claim_id, valid_from_run, line_no)",
      "CREATE INDEX ON field_changes (run_id)",
    ].join("; "),
  ];
}

/**
 * A later run as psql: the changed claims and their lines \copied into staging, the field changes
 * into their table; the changed claims' current versions and lines closed at `run`, then replaced.
 */
function updateRunScript(file: string, run: number): string[] {
  return [
    "CREATE TEMP TABLE claims_in (LIKE claims) ON COMMIT DROP; CREATE TEMP TABLE claim_lines_in (LIKE claim_lines) ON COMMIT DROP",
    `\\copy claims_in FROM '${file}' WITH (FORMAT csv, HEADER true)`,
    `\\copy claim_lines_in FROM '${file}.lines.csv' WITH (FORMAT csv, HEADER true)`,
    `\\copy field_changes FROM '${file}.fc.csv' WITH (FORMAT csv, HEADER true)`,
    [
      `INSERT INTO claims_closed SELECT c.*, ${run} FROM claims c JOIN claims_in s ON s.id = c.id`,
      `INSERT INTO claim_lines_closed SELECT l.*, ${run} FROM claim_lines l JOIN claims_in s ON s.id = l.claim_id`,
      "DELETE FROM claims c USING claims_in s WHERE c.id = s.id",
      "DELETE FROM claim_lines l USING claims_in s WHERE l.claim_id = s.id",
      "INSERT INTO claims SELECT * FROM claims_in",
      "INSERT INTO claim_lines SELECT * FROM claim_lines_in",
    ].join("; "),
  ];
}

/** The same work: after `run`, every table holds as many rows on both sides. */
async function sameRows(cluster: PgCluster, i: number, run: number): Promise<void> {
  const count = async (database: string, table: string) => {
    const c = new pg.Client({ connectionString: cluster.url.replace("/postgres?", `/${database}?`) });
    await c.connect();
    try {
      return Number((await c.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
    } finally {
      await c.end();
    }
  };
  for (const table of SAME_TABLES) {
    const [a, b] = [await count(`ours${i}`, `${DEFAULT_SCHEMA}.${table}`), await count(`base${i}`, table)];
    if (a !== b) throw new Error(`the Postgres baseline is not the same work after run ${run}: its ${table} holds ${b} rows, the sink's ${a}`);
  }
}
