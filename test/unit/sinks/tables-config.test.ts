/**
 * A folder sink in the config file with `"layout": "tables"`: parsed by the schema, delivered in
 * the table layout (DIR/members/run_id=…/, DIR/_manifests/), its own ledger output; a layout with
 * another format than Parquet, or an unknown layout, is a config error naming the sink.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Config as ConfigSchema } from "../../../src/config/schema.js";
import { configuredOutputs, deliverAll } from "../../../src/sinks/outputs.js";
import { useTempStores } from "../../helpers/temp-store.js";
import { baseData, runSync } from "./fixtures.js";

const setup = useTempStores();

describe("a folder sink with \"layout\": \"tables\"", () => {
  it("delivers the table layout; CSV with it, or an unknown layout, is a config error naming the sink", async () => {
    const t = setup();
    const r = await runSync(t, baseData());
    const parsed = ConfigSchema.parse({ sinks: { lake: { type: "folder", dir: "lake", format: "parquet", layout: "tables" } } });
    const outputs = configuredOutputs(parsed.sinks, {}, t.dir);
    expect(outputs.lake).toMatchObject({ kind: "folder", layout: "tables", format: "parquet" });
    const [d] = await deliverAll(t.db, Object.values(outputs), r.runId);
    expect(d!.outcome.status, JSON.stringify(d!.outcome.error)).toBe("delivered");
    expect(existsSync(join(t.dir, "lake", "members", "run_id=00000001", "part-00000.parquet"))).toBe(true);
    expect(existsSync(join(t.dir, "lake", "_manifests", "00000001.json"))).toBe(true);
    const outs = t.db.prepare("SELECT DISTINCT output FROM _deliveries").pluck().all();
    expect(outs).toEqual([`parquet-tables:${join(t.dir, "lake")}`]);

    const csv = ConfigSchema.parse({ sinks: { lake: { type: "folder", dir: "lake", layout: "tables" } } });
    expect(() => configuredOutputs(csv.sinks, {}, t.dir)).toThrow(/sinks\.lake\.layout: the table layout is written as Parquet, not csv/);
    expect(() => ConfigSchema.parse({ sinks: { lake: { type: "folder", dir: "lake", layout: "hive" } } })).toThrow(/folder|tables/);
  });
});
