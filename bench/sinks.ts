/**
 * The sinks section of `npm run bench` (BENCH_ONLY=sinks runs it alone): one run's claim deltas
 * (a first sync of groups and claims, ~300,000 claims)
 *
 * - loaded into Postgres by the sink, against `psql \copy` of the same rows (the columns the
 *   sink's claims table has, as CSV) into a bare table of the same columns, and of the claims'
 *   lines into a bare `claim_lines` of the sink's columns (the sink derives them in the database),
 *   then their primary keys and indexes built (faster than copying into indexed tables), in the
 *   same cluster;
 * - exported as CSV, against a bare csv-stringify of the same rows to files.
 *
 * Each pair alternates BENCH_SINK_REPEAT times (3); the medians' ratio is the speed of ours
 * relative to the baseline (bar: at least 0.7).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { IndexedColumns } from "../src/store/analyst-schema.js";
import { columnName } from "../src/store/resources.js";
import { DEFAULT_SCHEMA } from "../src/sinks/postgres/connection.js";
import { warehouseColumns } from "../src/sinks/postgres/warehouse-schema.js";
import type { Report, Worker } from "./analyst.js";
import { pgBinDir, startPgCluster } from "./pg-cluster.js";

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
  readonly window: { from: string; to: string };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export async function sinksSection(dir: string, o: SinksOptions, startSandbox: Start, worker: Worker, report: Report): Promise<void> {
  const db = join(dir, "sinks.db");
  const sb = await startSandbox(["--members", String(o.members), "--groups", String(o.groups), "--claims-per-member", String(o.claimsPerMember)]);
  try {
    const first = worker(["sync", sb.baseUrl, sb.key, o.window.from, o.window.to, db, "groups,claims"]);
    if (first.status !== "succeeded") throw new Error(`the sinks section's sync failed: ${first.error}`);
  } finally {
    await sb.stop();
  }

  // CSV: our export of run 1 against a bare csv-stringify of the same rows.
  const ours: number[] = [];
  const bare: number[] = [];
  let rows = 0;
  for (let i = 0; i < o.repeat; i++) {
    const b = sinksWorker(["csv-bare", db, "1", join(dir, `bare-${i}`)]);
    bare.push(Number(b.ms));
    const e = sinksWorker(["csv-export", db, "1", join(dir, `export-${i}`)]);
    ours.push(Number(e.ms));
    rows = Number(e.rows);
    rmSync(join(dir, `export-${i}`), { recursive: true, force: true });
    for (const f of [`bare-${i}.claims.csv`, `bare-${i}.lines.csv`]) rmSync(join(dir, f), { force: true });
  }
  const csvRatio = median(bare) / median(ours);
  report(
    `CSV export of ${rows} claim deltas vs bare csv-stringify of the same rows`,
    `${csvRatio.toFixed(3)} of its speed (${secs(median(ours))} vs ${secs(median(bare))})`,
    ">= 0.7",
    csvRatio >= 0.7,
  );

  // Postgres: the sink's load against psql \copy of the same rows, in one cluster with PostgreSQL's defaults.
  const cluster = await startPgCluster({ durable: true });
  try {
    const file = join(dir, "claims-rows.csv");
    sinksWorker(["pg-csv", db, "1", file]);
    const psql = existsSync(join(pgBinDir() ?? "", "psql")) ? join(pgBinDir()!, "psql") : "psql";
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    const loads: number[] = [];
    const copies: number[] = [];
    let loaded = 0;
    try {
      for (let i = 0; i < o.repeat; i++) {
        await admin.query(`CREATE DATABASE base${i}`);
        await admin.query(`CREATE DATABASE ours${i}`);
        // The baseline: the sink's claims table (same columns), filled the fastest plain way: \copy
        // into the bare table, then its key and indexes built, all in one psql session.
        const base = new pg.Client({ connectionString: cluster.url.replace("/postgres?", `/base${i}?`) });
        await base.connect();
        const cols = warehouseColumns("claims").map((c) => `${c.name} ${c.type}`).join(", ");
        await base.query(`CREATE TABLE claims (id text NOT NULL, ${cols}, data jsonb NOT NULL, valid_from_run bigint NOT NULL)`);
        await base.query(`CREATE TABLE claim_lines (claim_id text NOT NULL, line_no integer NOT NULL, "memberId" text, "groupId" text, "serviceDateFrom" date, code text, amount numeric, valid_from_run bigint NOT NULL)`);
        await base.end();
        const indexes = ["ALTER TABLE claims ADD PRIMARY KEY (id)", ...IndexedColumns.claims.map((c) => `CREATE INDEX ON claims ("${columnName(c)}")`), "ALTER TABLE claim_lines ADD PRIMARY KEY (claim_id, line_no)"];
        const t0 = performance.now();
        execFileSync(
          psql,
          ["-h", cluster.socketDir, "-U", "postgres", "-d", `base${i}`, "-v", "ON_ERROR_STOP=1", "-c", `\\copy claims FROM '${file}' WITH (FORMAT csv, HEADER true)`, "-c", `\\copy claim_lines FROM '${file}.lines.csv' WITH (FORMAT csv, HEADER true)`, "-c", indexes.join("; ")],
          { stdio: "pipe" },
        );
        copies.push(performance.now() - t0);
        const l = sinksWorker(["pg-load", db, cluster.url.replace("/postgres?", `/ours${i}?`), "1"]);
        loads.push(Number(l.ms));
        loaded = Number(l.rows);
        // The same work: the baseline's tables hold as many claims and lines as the sink's.
        const count = async (database: string, table: string) => {
          const c = new pg.Client({ connectionString: cluster.url.replace("/postgres?", `/${database}?`) });
          await c.connect();
          try {
            return Number((await c.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
          } finally {
            await c.end();
          }
        };
        for (const [mine, theirs] of [["claims", "claims"], ["claim_lines", "claim_lines"]] as const) {
          const [a, b] = [await count(`ours${i}`, `${DEFAULT_SCHEMA}.${mine}`), await count(`base${i}`, theirs)];
          if (a !== b) throw new Error(`the baseline is not the same work: ${theirs} ${b} rows, the sink's ${mine} ${a}`);
        }
      }
    } finally {
      await admin.end();
    }
    const pgRatio = median(copies) / median(loads);
    report(
      `Postgres load of ${loaded} claim deltas and their lines (current and closed versions, ledger; one transaction) vs psql \\copy of the same rows into the same tables, indexed after`,
      `${pgRatio.toFixed(3)} of its speed (${secs(median(loads))} vs ${secs(median(copies))})`,
      ">= 0.7",
      pgRatio >= 0.7,
    );
  } finally {
    await cluster.stop();
    rmSync(db, { force: true });
  }
}
