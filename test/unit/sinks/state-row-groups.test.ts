/**
 * The state export's Parquet files are written in row groups of STATE_ROW_GROUP rows: a group's
 * records are held parsed until it is written, so the group, not the table, bounds the memory
 * (at the delta files' 50,000 rows, 100,000 members peaked at 582 MB in the bench).
 */
import { DuckDBInstance } from "@duckdb/node-api";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { STATE_ROW_GROUP, writeStateFile } from "../../../src/sinks/state/state-writers.js";
import type { StateColumn } from "../../../src/sinks/state/state-views.js";

const dir = mkdtempSync(join(tmpdir(), "bsync-state-groups-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("state export: Parquet row groups", () => {
  it(`holds at most ${STATE_ROW_GROUP} rows per group, every row written`, async () => {
    const columns: StateColumn[] = [
      { name: "id", type: "string", required: true, at: (r) => r[0] },
      { name: "data", type: "json", required: true, at: (r) => r[1] },
    ];
    const total = 25_000;
    function* rows() {
      for (let i = 0; i < total; i++) yield [`m${i}`, JSON.stringify({ id: `m${i}`, n: i })];
    }
    const file = await writeStateFile(dir, "members", "parquet", columns, rows());
    expect(file.rows).toBe(total);
    const duck = await (await DuckDBInstance.create(":memory:")).connect();
    try {
      const groups = (await duck.runAndReadAll(`SELECT DISTINCT row_group_id, row_group_num_rows::INTEGER AS n FROM parquet_metadata('${join(dir, "members.parquet")}') ORDER BY row_group_id`)).getRowObjectsJson();
      expect(groups.length).toBeGreaterThan(1);
      expect(Math.max(...groups.map((g) => Number(g.n)))).toBeLessThanOrEqual(10_000);
      expect(groups.reduce((n, g) => n + Number(g.n), 0)).toBe(total);
    } finally {
      duck.closeSync();
    }
  });
});
