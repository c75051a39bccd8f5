/**
 * One measurement of the state export, in its own process (its time and peak memory its own):
 *   node dist/bench/state-worker.js state DB OUT   (`export --state` of the last run, Parquet)
 *   node dist/bench/state-worker.js plain DB OUT   (the baseline: each view's rows from one plain
 *       `SELECT * FROM <view>`, written by the same Parquet writer with the same column types)
 * Prints one JSON line: {ms, rows, maxRssMb}.
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { writeFile } from "../src/sinks/parquet/parquet-format.js";
import type { ParquetColumn } from "../src/sinks/parquet/parquet-columns.js";
import { exportState } from "../src/sinks/state/state-export.js";
import { STATE_ROW_GROUP } from "../src/sinks/state/state-writers.js";
import { asCents, asEpochDay, asEpochMicros, typedFields } from "../src/sinks/typed-fields.js";
import { StoredResources } from "../src/store/schema/resources.js";

const maxRssMb = () => Math.round(process.resourceUsage().maxRSS / 1024);

type Row = unknown[];

/** The baseline's conversion of one typed value: what a plain loader with this writer would do. */
const convert: Record<string, (v: unknown) => unknown> = {
  date: asEpochDay,
  decimal: asCents,
  timestamp: asEpochMicros,
  text: (v) => (v === null ? null : String(v)),
};

function plain(db: BetterSqlite3.Database, out: string): number {
  mkdirSync(out, { recursive: true });
  let rows = 0;
  for (const r of StoredResources) {
    const fields = typedFields(r);
    const columns: ParquetColumn<Row>[] = [
      { name: "id", type: "string", required: true, value: (x) => x[0] },
      ...fields.map((f, i): ParquetColumn<Row> => ({ name: f.name, type: f.type, value: (x) => convert[f.type]!(x[i + 1]) })),
      { name: "hash", type: "string", required: true, value: (x) => x[fields.length + 1] },
      { name: "data", type: "json", required: true, value: (x) => JSON.parse(x[fields.length + 2] as string) },
    ];
    const sql = `SELECT id, ${fields.map((f) => `"${f.name}"`).join(", ")}, hash, data FROM "${r}"`;
    rows += writeFile(out, `${r}.parquet`, columns, db.prepare(sql).raw().iterate() as Iterable<Row>, STATE_ROW_GROUP).rows;
  }
  const lines: ParquetColumn<Row>[] = [
    { name: "claim_id", type: "string", required: true, value: (x) => x[0] },
    { name: "line_no", type: "int64", required: true, value: (x) => BigInt(x[1] as number) },
    { name: "memberId", type: "text", value: (x) => x[2] },
    { name: "groupId", type: "text", value: (x) => x[3] },
    { name: "serviceDateFrom", type: "date", value: (x) => asEpochDay(x[4]) },
    { name: "code", type: "text", value: (x) => x[5] },
    { name: "amount", type: "decimal", value: (x) => asCents(x[6]) },
  ];
  const sql = "SELECT claim_id, line_no, memberId, groupId, serviceDateFrom, code, amount FROM claim_lines";
  rows += writeFile(out, "claim_lines.parquet", lines, db.prepare(sql).raw().iterate() as Iterable<Row>, STATE_ROW_GROUP).rows;
  return rows;
}

async function main(): Promise<void> {
  const [mode, dbPath, out] = process.argv.slice(2);
  const db = new BetterSqlite3(dbPath!, { readonly: true });
  const began = performance.now();
  let rows: number;
  if (mode === "state") {
    const run = db.prepare("SELECT MAX(run_id) FROM _runs WHERE status = 'succeeded'").pluck().get() as number;
    rows = (await exportState(db, "state", run, out!, "parquet")).files.reduce((n, f) => n + f.rows, 0);
  } else if (mode === "plain") {
    rows = plain(db, join(out!, "plain"));
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  db.close();
  process.stdout.write(`${JSON.stringify({ ms: performance.now() - began, rows, maxRssMb: maxRssMb() })}\n`);
}

await main();
