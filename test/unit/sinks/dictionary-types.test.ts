/**
 * The dictionary's Parquet types are the files' own: every Parquet column of every file, in the
 * run folder and in the table layout, read back with DuckDB's parquet_schema (physical type and
 * its annotation) and DESCRIBE (how an engine types it: DECIMAL(18,2), DATE, TIMESTAMP WITH TIME
 * ZONE), against what docs/outputs.md lists. The table layout's files are the same less `run_id`.
 */
import { DuckDBInstance } from "@duckdb/node-api";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dictionaryFiles } from "../../../src/sinks/dictionary-columns.js";
import { exportFolder } from "../../../src/sinks/files/formats.js";
import { useTempStores } from "../../helpers/temp-store.js";
import { baseData, runSync } from "./fixtures.js";

const setup = useTempStores();
type Row = Record<string, unknown>;

/** A column of parquet_schema as the dictionary writes its type: `INT64 (DECIMAL(18,2))`. */
function asDictionary(c: Row): string {
  const conv = c.converted_type === null ? null : String(c.converted_type);
  const logical = String(c.logical_type ?? "");
  let ann: string | null = conv;
  if (conv === "DECIMAL") ann = `DECIMAL(${String(c.precision)},${String(c.scale)})`;
  if (conv === "TIMESTAMP_MICROS") ann = `TIMESTAMP(MICROS, ${/isAdjustedToUTC=1/.test(logical) ? "UTC" : "local"})`;
  return ann ? `${String(c.type)} (${ann})` : String(c.type);
}

const ENGINE_TYPE: Readonly<Record<string, string>> = { decimal: "DECIMAL(18,2)", date: "DATE", timestamp: "TIMESTAMP WITH TIME ZONE", integer: "BIGINT" };

describe("the dictionary's Parquet types", () => {
  it("are the files' physical types and annotations (parquet_schema), and engines read them as DECIMAL(18,2), DATE, TIMESTAMP WITH TIME ZONE", async () => {
    const t = setup();
    const r = await runSync(t, baseData());
    const folder = (await exportFolder(t.db, r.runId, join(t.dir, "pq"), "parquet")).dir;
    const lake = join(t.dir, "lake");
    await exportFolder(t.db, r.runId, lake, "parquet", "tables");
    const duck = await (await DuckDBInstance.create(":memory:")).connect();
    const rows = async (sql: string) => (await duck.runAndReadAll(sql)).getRowObjectsJson() as Row[];
    let checked = 0;
    try {
      for (const f of dictionaryFiles()) {
        const want = f.columns.filter((c) => c.parquet !== null).map((c) => [c.parquet!, c.parquetType!, c.type] as const);
        const places = [
          { file: join(folder, `${f.name}.parquet`), cols: want },
          { file: join(lake, f.name, "run_id=00000001", "part-00000.parquet"), cols: want.filter(([name]) => name !== "run_id") },
        ];
        for (const { file, cols } of places) {
          const schema = (await rows(`SELECT name, type, converted_type, logical_type, scale, precision FROM parquet_schema('${file}') WHERE name <> 'root' AND num_children IS NULL`)).map((c) => [String(c.name), asDictionary(c)]);
          expect(schema, file).toEqual(cols.map(([name, type]) => [name, type]));
          const described = new Map((await rows(`DESCRIBE SELECT * FROM read_parquet('${file}')`)).map((c) => [String(c.column_name), String(c.column_type)]));
          for (const [name, , type] of cols) {
            if (ENGINE_TYPE[type]) expect(`${f.name}.${name}: ${described.get(name)}`).toBe(`${f.name}.${name}: ${ENGINE_TYPE[type]}`);
            checked++;
          }
        }
      }
    } finally {
      duck.closeSync();
    }
    expect(checked).toBeGreaterThan(100);
  });
});
