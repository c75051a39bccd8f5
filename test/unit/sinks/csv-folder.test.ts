import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { deliverCsv } from "../../../src/sinks/csv/deliver-csv.js";
import { writeRunCsv } from "../../../src/sinks/csv/write-run-csv.js";
import { csvFormat } from "../../../src/sinks/csv/csv-format.js";
import { writeFolder } from "../../../src/sinks/files/folder-sink.js";
import { OutputError } from "../../../src/sinks/output-error.js";
import { tempStore, type TempStore } from "../../helpers/temp-store.js";
import { baseData, csvObjects, failedRunWithChanges, parseCsv, runSync } from "./fixtures.js";
import { runDir } from "../../helpers/run-folders.js";

let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.reverse()) c();
  cleanup = [];
});

function setup(): TempStore {
  const t = tempStore();
  cleanup.push(t.cleanup);
  return t;
}

const ALL_FILES = ["claim_lines.csv", "claims.csv", "coverages.csv", "designs.csv", "groups.csv", "members.csv", "plans.csv"];

function bytesOf(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).sort().map((f) => [f, readFileSync(join(dir, f)).toString("base64")]));
}

describe("CSV delta folders", () => {
  // These two start a Python per file parsed: seconds on an idle machine, tens of seconds on a
  // loaded one, so they get a time limit that does not depend on the machine's speed.
  it("a value with commas, quotes, newlines, a leading = and non-ASCII text round-trips (parsed by Python's csv)", async () => {
    const t = setup();
    const data = baseData();
    const nasty = 'Ana, "the \'great\'"\nsecond line\r\nthird';
    data.members[0]!.firstName = nasty;
    data.members[0]!.lastName = "=HYPERLINK(\"http://x\")";
    data.members[0]!.address = { city: "São Paulo 李 Zoë 🙂" };
    (data.claims[0]!.lines as Record<string, unknown>[])[0]!.code = "a,b\n\"c\"";
    const r = await runSync(t, data);
    const folder = writeRunCsv(t.db, r.runId, join(t.dir, "out"));
    const m1 = csvObjects(join(folder.dir, "members.csv")).find((x) => x.id === "m1")!;
    expect(m1.firstName).toBe(nasty);
    expect(m1.lastName).toBe("=HYPERLINK(\"http://x\")");
    expect(m1["address.city"]).toBe("São Paulo 李 Zoë 🙂");
    expect(m1.ssn_last4).toBe("6701");
    expect(JSON.stringify(parseCsv(join(folder.dir, "members.csv")))).not.toContain("123-45-");
    const line = csvObjects(join(folder.dir, "claim_lines.csv")).find((x) => x.claim_id === "k1")!;
    expect(line.code).toBe("a,b\n\"c\"");
    // Every row has as many cells as the header, and the manifest's row counts are the parsed ones.
    const manifest = JSON.parse(readFileSync(join(folder.dir, "manifest.json"), "utf8")) as { files: { file: string; rows: number }[] };
    for (const f of manifest.files) {
      const [header, ...rows] = parseCsv(join(folder.dir, f.file));
      expect(rows.length).toBe(f.rows);
      for (const row of rows) expect(row.length).toBe(header!.length);
    }
  });

  it("every walked resource and child list has its file, with only the header when nothing changed; the manifest hashes them", async () => {
    const t = setup();
    await runSync(t, baseData());
    const r2 = await runSync(t, baseData());
    const folder = writeRunCsv(t.db, r2.runId, join(t.dir, "out"));
    expect(readdirSync(folder.dir).sort()).toEqual([...ALL_FILES, "manifest.json"].sort());
    const manifest = JSON.parse(readFileSync(join(folder.dir, "manifest.json"), "utf8")) as { runId: number; runs: number[]; files: { file: string; rows: number; sha256: string }[] };
    expect(manifest.runId).toBe(r2.runId);
    expect(manifest.runs).toEqual([r2.runId]);
    expect(manifest.files.map((f) => f.file).sort()).toEqual(ALL_FILES);
    for (const f of manifest.files) {
      const text = readFileSync(join(folder.dir, f.file));
      expect(f.rows).toBe(0);
      expect(createHash("sha256").update(text).digest("hex")).toBe(f.sha256);
      expect(parseCsv(join(folder.dir, f.file))).toHaveLength(1);
      expect(text.toString("utf8")).toMatch(/^op,run_id,[^\r\n]+\r\n$/);
    }
    expect(readFileSync(join(folder.dir, "members.csv"), "utf8")).toMatch(/^op,run_id,id,changed_fields,subscriberId,firstName,/);
    expect(readFileSync(join(folder.dir, "claim_lines.csv"), "utf8")).toMatch(/^op,run_id,claim_id,line_no,code,amount\r\n/);
  });

  it("export of one run writes exactly its changes, the same bytes each time, failed runs included", async () => {
    const t = setup();
    await runSync(t, baseData());
    const data = baseData();
    data.designs[0]!.name = "Platinum";
    const failed = await failedRunWithChanges(t, data);
    const out = join(t.dir, "out");
    const first = writeRunCsv(t.db, failed.runId, out);
    const bytes = bytesOf(first.dir);
    // Time passes, other runs happen, another delivery writes beside it: the export does not change.
    const later = await runSync(t, data);
    await deliverCsv(t.db, join(t.dir, "elsewhere"), later.runId);
    // Three days later, on a fake clock (no real waiting).
    vi.useFakeTimers({ toFake: ["Date"] });
    let again: ReturnType<typeof writeRunCsv>;
    try {
      vi.setSystemTime(Date.now() + 3 * 86_400_000);
      again = writeRunCsv(t.db, failed.runId, out);
    } finally {
      vi.useRealTimers();
    }
    expect(bytesOf(again.dir)).toEqual(bytes);
    const designs = csvObjects(join(again.dir, "designs.csv"));
    expect(designs).toEqual([expect.objectContaining({ op: "update", run_id: String(failed.runId), id: "d1", name: "Platinum" })]);
    expect(readdirSync(out).filter((f) => f.startsWith("."))).toEqual([]);
  });

  it("a delivery across runs writes each run's folder with that run's rows; read in run order, they give the history", async () => {
    const t = setup();
    const r1 = await runSync(t, baseData());
    const data = baseData();
    data.members = data.members.filter((m) => m.id !== "m2");
    const r2 = await runSync(t, data);
    const back = baseData();
    const r3 = await runSync(t, back); // m2 comes back
    const d = await deliverCsv(t.db, join(t.dir, "out"), r3.runId);
    expect(d.status).toBe("delivered");
    expect(d.runs).toEqual([r1.runId, r2.runId, r3.runId]);
    const m2 = [r1, r2, r3].flatMap((r) =>
      csvObjects(join(t.dir, "out", runDir(r.runId), "members.csv")).filter((x) => x.id === "m2").map((x) => `${x.op} ${x.run_id}`),
    );
    // Applied folder by folder, the rows give the history: inserted, deleted, inserted again.
    expect(m2).toEqual([`insert ${r1.runId}`, `delete ${r2.runId}`, `insert ${r3.runId}`]);
    for (const r of [r1, r2, r3]) {
      const manifest = JSON.parse(readFileSync(join(t.dir, "out", runDir(r.runId), "manifest.json"), "utf8")) as { runId: number; runs: number[] };
      expect(manifest).toMatchObject({ runId: r.runId, runs: [r.runId] });
    }
  });

  it("export will not replace a folder that holds something else (an older delivery of several runs, a stranger's folder)", async () => {
    const t = setup();
    const r1 = await runSync(t, baseData());
    const r2 = await runSync(t, baseData());
    const out = join(t.dir, "out");
    // A folder as an older benefits-sync delivered it: runs 1 and 2 together, named after 2.
    writeFolder(t.db, out, csvFormat, { folderRun: r2.runId, runs: [r1.runId, r2.runId] });
    const delivered = bytesOf(join(out, runDir(r2.runId)));
    expect(() => writeRunCsv(t.db, r2.runId, out)).toThrow(OutputError);
    expect(() => writeRunCsv(t.db, r2.runId, out)).toThrow(/holds the deltas of runs 1, 2/);
    expect(bytesOf(join(out, runDir(r2.runId)))).toEqual(delivered);
    mkdirSync(join(out, runDir(r1.runId)));
    writeFileSync(join(out, runDir(r1.runId), "notes.txt"), "mine");
    expect(() => writeRunCsv(t.db, r1.runId, out)).toThrow(/not a deltas folder/);
    expect(readFileSync(join(out, runDir(r1.runId), "notes.txt"), "utf8")).toBe("mine");
  });
});

describe("output path problems are clear errors: the path, the problem, the fix", () => {
  it("--out naming a file, under a file, or with a missing parent", async () => {
    const t = setup();
    const r = await runSync(t, baseData());
    const file = join(t.dir, "a-file.txt");
    writeFileSync(file, "x");
    const problem = (dir: string) => {
      try {
        writeRunCsv(t.db, r.runId, dir);
      } catch (e) {
        expect(e).toBeInstanceOf(OutputError);
        return (e as Error).message;
      }
      throw new Error("expected an error");
    };
    const namesFile = problem(file);
    expect(namesFile).toContain(file);
    expect(namesFile).toMatch(/is a file, not a directory/);
    expect(namesFile).toMatch(/Fix: /);
    expect(namesFile).not.toMatch(/EEXIST|ENOTDIR|ENOENT/);
    const underFile = problem(join(file, "deltas"));
    expect(underFile).toContain(file);
    expect(underFile).toMatch(/is a file, not a directory/);
    const missing = problem(join(t.dir, "no", "such", "deltas"));
    expect(missing).toContain(join(t.dir, "no", "such"));
    expect(missing).toMatch(/does not exist/);
    expect(missing).toMatch(/mkdir -p/);
    expect((() => { try { writeRunCsv(t.db, r.runId, file); } catch (e) { return (e as OutputError).code; } })()).toBe("OUTPUT_PATH");
  });
});
