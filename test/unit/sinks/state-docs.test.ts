/**
 * docs/outputs.md documents the state and history exports: every column history adds, with its
 * Parquet type, and the names Fivetran's history mode, dbt snapshots and dlt's scd2 give them.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const doc = readFileSync(new URL("../../../docs/outputs.md", import.meta.url), "utf8");

describe("docs/outputs.md: state and history", () => {
  it("lists each history column with its Parquet type", () => {
    const section = doc.slice(doc.indexOf("## State and history"));
    expect(section.startsWith("## State and history")).toBe(true);
    const types: Record<string, string> = { valid_from_run: "INT64", valid_to_run: "INT64", valid_from: "TIMESTAMP", valid_to: "TIMESTAMP", is_current: "BOOLEAN", is_deleted: "BOOLEAN" };
    for (const [col, type] of Object.entries(types)) expect(section).toMatch(new RegExp(`^\\| \`${col}\` \\| ${type}`, "m"));
    expect(section).toContain("DIR/state-00000010/");
  });

  it("maps them to Fivetran history mode, dbt snapshots and dlt scd2", () => {
    for (const name of ["_fivetran_start", "_fivetran_end", "_fivetran_active", "dbt_valid_from", "dbt_valid_to", "_dlt_valid_from", "_dlt_valid_to"]) expect(doc).toContain(`\`${name}`);
  });
});
