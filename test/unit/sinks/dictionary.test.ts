/**
 * The data dictionary cannot drift: docs/outputs.md is what the generator writes today, and what
 * it lists is what the writers write (CSV headers, Parquet columns read back by DuckDB, the
 * manifest's keys and dictionary version).
 */
import { DuckDBInstance } from "@duckdb/node-api";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { dictionaryFiles } from "../../../src/sinks/dictionary-columns.js";
import { dictionaryMarkdown } from "../../../src/sinks/dictionary.js";
import { exportFolder } from "../../../src/sinks/files/formats.js";
import { useTempStores } from "../../helpers/temp-store.js";
import { baseData, runSync } from "./fixtures.js";

const DOC = fileURLToPath(new URL("../../../docs/outputs.md", import.meta.url));
const setup = useTempStores();

describe("docs/outputs.md", () => {
  it("is exactly what `npm run docs:outputs` generates (regenerate it after changing a definition)", () => {
    expect(readFileSync(DOC, "utf8")).toBe(dictionaryMarkdown());
  });

  it("lists the columns the writers write: CSV headers, Parquet columns (DuckDB), the manifest's keys and dictionary version", async () => {
    const t = setup();
    const r = await runSync(t, baseData());
    const csv = (await exportFolder(t.db, r.runId, join(t.dir, "csv"), "csv")).dir;
    const pq = (await exportFolder(t.db, r.runId, join(t.dir, "pq"), "parquet")).dir;
    const doc = readFileSync(DOC, "utf8");
    const duck = await (await DuckDBInstance.create(":memory:")).connect();
    try {
      for (const f of dictionaryFiles()) {
        // The doc's own table for the file: its first column (CSV) and second (Parquet), as a reader sees them.
        const section = doc.split(`\n## ${f.name}\n`)[1]!.split("\n## ")[0]!;
        const table = section.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| CSV column"));
        const named = (i: number) => table.map((l) => l.split(" | ")[i]!.replace(/^\| /, "")).filter((c) => c.startsWith("`")).map((c) => c.slice(1, -1));
        const header = readFileSync(join(csv, `${f.name}.csv`), "utf8").split("\r\n")[0]!.split(",");
        expect(named(0), `${f.name}.csv`).toEqual(header);
        const described = (await duck.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${join(pq, `${f.name}.parquet`)}')`)).getRowObjectsJson();
        expect(named(1), `${f.name}.parquet`).toEqual(described.map((c) => c.column_name));
      }
    } finally {
      duck.closeSync();
    }
    const manifest = JSON.parse(readFileSync(join(csv, "manifest.json"), "utf8")) as Record<string, unknown>;
    const keys = [...doc.split("\n## manifest.json\n")[1]!.split("\n## ")[0]!.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1]);
    expect(Object.keys(manifest)).toEqual(keys);
    expect(doc).toContain(`Dictionary version \`${manifest.dictionaryVersion as string}\``);
    expect(doc).toContain(`layout version ${manifest.layoutVersion as number}.`);
  });
});
