/**
 * The table layout (issue 39): each resource its own Hive-style table,
 * `DIR/members/run_id=00000010/part-00000.parquet`, one manifest per run in `DIR/_manifests/`,
 * written last. Read back by DuckDB with `hive_partitioning = true`; the ledger as for run
 * folders (each run once, a crash between the partitions and the manifest re-delivered).
 */
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliverToSink } from "../../../src/sinks/sink.js";
import { exportFolder, tablesFormat } from "../../../src/sinks/files/formats.js";
import { tablesSink } from "../../../src/sinks/files/tables-sink.js";
import { useTempStores, type TempStore } from "../../helpers/temp-store.js";
import { baseData, runSync } from "../../unit/sinks/fixtures.js";

const setup = useTempStores();
let duck: DuckDBConnection;
beforeAll(async () => {
  duck = await (await DuckDBInstance.create(":memory:")).connect();
});
afterAll(() => duck?.closeSync());

type Row = Record<string, unknown>;
const rows = async (sql: string): Promise<Row[]> => (await duck.runAndReadAll(sql)).getRowObjectsJson() as Row[];
const TABLES = ["designs", "groups", "plans", "members", "coverages", "claims", "claim_lines"];

/** Every file under `dir`, relative, sorted. */
function tree(dir: string, rel = ""): string[] {
  return readdirSync(join(dir, rel), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? tree(dir, join(rel, e.name)) : [join(rel, e.name)]))
    .sort();
}

function changesOf(t: TempStore, runs: readonly number[], resource: string): string[] {
  return (t.db.prepare(`SELECT op, run_id, id FROM changes WHERE resource = ? AND run_id IN (${runs.join(",")})`).all(resource) as { op: string; run_id: number; id: string }[])
    .map((c) => `${c.run_id} ${c.op} ${c.id}`)
    .sort();
}

async function twoRuns(t: TempStore): Promise<[number, number]> {
  const r1 = await runSync(t, baseData());
  const d = baseData();
  d.members[0]!.firstName = "Ana Maria";
  d.members = d.members.filter((m) => m.id !== "m3");
  Object.assign(d.claims[0]!, { claimAmount: "0.29", paidAmount: "-1234.5" });
  const r2 = await runSync(t, d);
  expect(r2.status).toBe("succeeded");
  return [r1.runId, r2.runId];
}

describe("the table layout", () => {
  it("writes each table Hive-style, one manifest per run under _manifests/, nothing hidden left; DuckDB reads it as tables", async () => {
    const t = setup();
    const [r1, r2] = await twoRuns(t);
    const out = join(t.dir, "lake");
    const outcome = await deliverToSink(t.db, tablesSink(out, await tablesFormat()), r2);
    expect(outcome.status).toBe("delivered");
    expect(outcome.runs).toEqual([r1, r2]);
    const pad = (r: number) => String(r).padStart(8, "0");
    expect(tree(out)).toEqual(
      [
        ...[r1, r2].map((r) => `_manifests/${pad(r)}.json`),
        ...TABLES.flatMap((name) => [r1, r2].map((r) => `${name}/run_id=${pad(r)}/part-00000.parquet`)),
      ].sort(),
    );
    // The manifest lists each file by its path under DIR, with its rows and hash.
    const m = JSON.parse(readFileSync(join(out, "_manifests", `${pad(r2)}.json`), "utf8")) as { runId: number; layout: string; format: string; files: { file: string; rows: number; sha256: string }[] };
    expect(m).toMatchObject({ runId: r2, layout: "tables", format: "parquet" });
    expect(m.files.map((f) => f.file).sort()).toEqual(TABLES.map((name) => `${name}/run_id=${pad(r2)}/part-00000.parquet`).sort());
    for (const f of m.files) expect(createHash("sha256").update(readFileSync(join(out, f.file))).digest("hex"), f.file).toBe(f.sha256);

    for (const table of ["members", "claims", "coverages"]) {
      const got = await rows(`SELECT run_id, op, id FROM read_parquet('${out}/${table}/*/*.parquet', hive_partitioning = true, hive_types = {'run_id': BIGINT})`);
      expect(got.map((x) => `${x.run_id as string} ${x.op as string} ${x.id as string}`).sort(), table).toEqual(changesOf(t, [r1, r2], table));
    }
    // The partition is the only run_id: the files do not carry one of their own.
    const inFile = await rows(`SELECT name FROM parquet_schema('${out}/members/run_id=${pad(r2)}/part-00000.parquet')`);
    expect(inFile.map((x) => x.name)).not.toContain("run_id");
    expect(inFile.map((x) => x.name)).toContain("op");
    const described = await rows(`DESCRIBE SELECT * FROM read_parquet('${out}/claims/*/*.parquet', hive_partitioning = true, hive_types = {'run_id': BIGINT})`);
    expect(Object.fromEntries(described.map((x) => [x.column_name, x.column_type]))).toMatchObject({ run_id: "BIGINT", claimAmount: "DECIMAL(18,2)", serviceDateFrom: "DATE" });
    const cents = await rows(`SELECT id, "paidAmount"::VARCHAR AS paid, "claimAmount"::VARCHAR AS amount FROM read_parquet('${out}/claims/*/*.parquet', hive_partitioning = true, hive_types = {'run_id': BIGINT}) WHERE run_id = ${r2} AND id = 'k1'`);
    expect(cents).toEqual([{ id: "k1", paid: "-1234.50", amount: "0.29" }]);

    // Each run once: nothing more to deliver, and the files do not change.
    const before = tree(out).map((f) => readFileSync(join(out, f)).toString("base64"));
    const again = await deliverToSink(t.db, tablesSink(out, await tablesFormat()), r2);
    expect(again).toMatchObject({ status: "nothing", runs: [] });
    expect(tree(out).map((f) => readFileSync(join(out, f)).toString("base64"))).toEqual(before);
  });

  it("export --run N in the table layout gives the same bytes as its delivery, and again the same bytes", async () => {
    const t = setup();
    const [, r2] = await twoRuns(t);
    const delivered = join(t.dir, "delivered");
    expect((await deliverToSink(t.db, tablesSink(delivered, await tablesFormat()), r2)).status).toBe("delivered");
    const exported = join(t.dir, "exported");
    const f = await exportFolder(t.db, r2, exported, "parquet", "tables");
    expect(f.dir).toBe(exported);
    const bytes = (dir: string) => Object.fromEntries(tree(dir).map((p) => [p, readFileSync(join(dir, p)).toString("base64")]));
    const want = Object.fromEntries(Object.entries(bytes(delivered)).filter(([p]) => p.includes(String(r2).padStart(8, "0"))));
    expect(bytes(exported)).toEqual(want);
    await exportFolder(t.db, r2, exported, "parquet", "tables");
    expect(bytes(exported)).toEqual(want);
  });

  it("refuses a partition directory it did not write, and a DIR of run folders, naming them; nothing changes", async () => {
    const t = setup();
    const r = await runSync(t, baseData());
    const out = join(t.dir, "lake");
    const stranger = join(out, "members", `run_id=${String(r.runId).padStart(8, "0")}`);
    mkdirSync(stranger, { recursive: true });
    writeFileSync(join(stranger, "notes.txt"), "mine");
    const refused = await deliverToSink(t.db, tablesSink(out, await tablesFormat()), r.runId);
    expect(refused.status).toBe("failed");
    expect(refused.error?.message).toContain(stranger);
    expect(tree(out)).toEqual([`members/run_id=${String(r.runId).padStart(8, "0")}/notes.txt`]);

    const folders = join(t.dir, "folders");
    await exportFolder(t.db, r.runId, folders, "parquet");
    await expect(exportFolder(t.db, r.runId, folders, "parquet", "tables")).rejects.toThrow(/run folders.*layout/);
    expect(existsSync(join(folders, "_manifests"))).toBe(false);
  });

  it("a kill -9 after the partitions are in place and before the manifest: no manifest, and the next delivery completes the run", async () => {
    const t = setup();
    const r = await runSync(t, baseData());
    const out = join(t.dir, "lake");
    await crashBeforeManifest(t.path, out, r.runId);
    const pad = String(r.runId).padStart(8, "0");
    expect(existsSync(join(out, "members", `run_id=${pad}`, "part-00000.parquet"))).toBe(true);
    expect(existsSync(join(out, "_manifests", `${pad}.json`))).toBe(false);
    const next = await deliverToSink(t.db, tablesSink(out, await tablesFormat()), r.runId);
    expect(next).toMatchObject({ status: "delivered", runs: [r.runId] });
    expect(tree(out)).toEqual([`_manifests/${pad}.json`, ...TABLES.map((name) => `${name}/run_id=${pad}/part-00000.parquet`)].sort());
    const got = await rows(`SELECT op, id FROM read_parquet('${out}/members/*/*.parquet', hive_partitioning = true)`);
    expect(got.map((x) => `${r.runId} ${x.op as string} ${x.id as string}`).sort()).toEqual(changesOf(t, [r.runId], "members"));
    rmSync(out, { recursive: true, force: true });
  });
});

const DIST = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "dist", "src");

/** A child process delivers run `runId` in the table layout and kills itself with SIGKILL once the partitions are published, before the manifest. */
async function crashBeforeManifest(dbPath: string, outDir: string, runId: number): Promise<void> {
  const script = `
    const { openDatabase } = await import(${JSON.stringify(join(DIST, "store", "file", "database.js"))});
    const { deliverToSink } = await import(${JSON.stringify(join(DIST, "sinks", "sink.js"))});
    const { tablesFormat } = await import(${JSON.stringify(join(DIST, "sinks", "files", "formats.js"))});
    const { tablesSink, publishPartitions } = await import(${JSON.stringify(join(DIST, "sinks", "files", "tables-sink.js"))});
    const db = openDatabase(${JSON.stringify(dbPath)});
    await deliverToSink(db, tablesSink(${JSON.stringify(outDir)}, await tablesFormat(), undefined, (staged) => {
      publishPartitions(staged);
      process.kill(process.pid, "SIGKILL");
    }), ${runId});
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.once("close", (_code, sig) => resolve(sig)));
  if (signal !== "SIGKILL") throw new Error(`the child did not crash as planned: ${stderr}`);
}
