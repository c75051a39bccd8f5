/**
 * docs/lake.md as printed: `benefits-sync sync --out lake --layout tables` (the built CLI, on the
 * PATH, against the sandbox), twice, then the page's DuckDB queries exactly as printed (relative
 * paths resolved from the directory holding `lake/`, as the page says): their rows are the
 * snapshot's changes for those runs, and the paid amounts are the cents the snapshot holds,
 * exactly. Also: the layout is Parquet's (`--format csv` refused, exit 2, nothing written), and
 * `export --layout tables` of a run gives the bytes its delivery has.
 */
import { DuckDBInstance } from "@duckdb/node-api";
import Database from "better-sqlite3";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { runDeltas } from "../../src/sinks/run-deltas.js";
import { asCents } from "../../src/sinks/typed-fields.js";
import { spawn } from "node:child_process";
import { installedEnv } from "../helpers/printed-commands.js";
import { EVENT_DEADLINE_MS } from "../helpers/wait.js";
import { docPage, namedBlock, README } from "../helpers/readme-blocks.js";

let sb: Sandbox;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox({ members: 40, groups: 2, seed: 39 });
  dir = mkdtempSync(join(tmpdir(), "bsync-lake-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const PAGE = docPage("lake.md");

/** The page's SQL block whose first line is `-- <name>`, as printed (that line included). */
function sqlBlock(name: string, page = PAGE): string {
  const found = [...readFileSync(page, "utf8").matchAll(/^```sql\n([\s\S]*?)^```$/gm)].map((m) => m[1]!).filter((b) => b.startsWith(`-- ${name}\n`));
  if (found.length !== 1) throw new Error(`${page}: ${found.length} sql blocks named "-- ${name}" (expected exactly one)`);
  return found[0]!;
}

function files(root: string, rel = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
    const p = join(rel, e.name);
    if (e.isDirectory()) Object.assign(out, files(root, p));
    else out[p] = readFileSync(join(root, p)).toString("base64");
  }
  return out;
}

/** A printed line through `sh -c`, without blocking this process (the sandbox answers from it). */
async function runPrinted(line: string, cwd: string, env: Record<string, string>): Promise<{ status: number | null; stderr: string }> {
  const child = spawn("sh", ["-c", line], { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => {
    stderr += `\n(killed: \`${line}\` still running after ${EVENT_DEADLINE_MS} ms)`;
    child.kill("SIGKILL");
  }, EVENT_DEADLINE_MS);
  const status = await new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  clearTimeout(timer);
  return { status, stderr };
}

describe("docs/lake.md, as printed", () => {
  it("sync --out lake --layout tables twice; the DuckDB queries read the snapshot's changes, cents exact", async () => {
    const cwd = mkdtempSync(join(dir, "run-"));
    const env = { ...installedEnv(dir), BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(cwd, "snap.db"), BENEFITS_PII_KEY: "lake-test-pii-key-0123456789abcdef" };
    const [line, ...rest] = namedBlock(PAGE, "lake: sync into tables");
    expect(rest).toEqual([]);
    for (let i = 0; i < 2; i++) {
      await sb.advance();
      const r = await runPrinted(line!, cwd, env);
      expect(r.status, `${line}\n${r.stderr}`).toBe(0);
    }
    expect(readdirSync(join(cwd, "lake", "_manifests")).sort()).toEqual(["00000001.json", "00000002.json"]);

    const db = new Database(join(cwd, "snap.db"), { readonly: true });
    const duck = await (await DuckDBInstance.create(":memory:")).connect();
    try {
      await duck.run(`SET file_search_path = '${cwd.replace(/'/g, "''")}'`);
      const members = (await duck.runAndReadAll(sqlBlock("duckdb: every member change, run by run"))).getRowObjectsJson();
      const want = [1, 2].flatMap((run) => [...runDeltas(db as never, "members", [run])].map((d) => `${run} ${d.op} ${d.id} ${String(d.data.lastName)} ${String(d.data.dateOfBirth)}`)).sort();
      expect(members.map((m) => `${String(m.run_id)} ${String(m.op)} ${String(m.id)} ${String(m.lastName)} ${String(m.dateOfBirth)}`).sort()).toEqual(want);
      expect(members.length).toBeGreaterThan(0);

      // The README prints recipes too: each `-- duckdb:` block there is the text of one run here.
      const run = ["duckdb: every member change, run by run", "duckdb: paid amounts per run, exact to the cent"].map((n) => sqlBlock(n));
      const inReadme = [...readFileSync(README, "utf8").matchAll(/^```sql\n([\s\S]*?)^```$/gm)].map((m) => m[1]!).filter((b) => b.startsWith("-- duckdb: "));
      expect(inReadme.length).toBeGreaterThan(0);
      for (const b of inReadme) expect(run).toContain(b);
      const paid = (await duck.runAndReadAll(sqlBlock("duckdb: paid amounts per run, exact to the cent"))).getRowObjectsJson();
      const byRun = [1, 2].flatMap((run) => {
        const claims = [...runDeltas(db as never, "claims", [run])];
        if (claims.length === 0) return [];
        const cents = claims.map((d) => asCents(d.data.paidAmount)).filter((c): c is bigint => c !== null);
        const sum = cents.reduce((a, b) => a + b, 0n);
        const text = cents.length ? `${sum < 0n ? "-" : ""}${(sum < 0n ? -sum : sum) / 100n}.${String((sum < 0n ? -sum : sum) % 100n).padStart(2, "0")}` : null;
        return [{ run_id: String(run), claims: String(claims.length), paid: text }];
      });
      expect(byRun.length, "the sandbox's claims in the default window").toBeGreaterThan(0);
      expect(paid.map((p) => ({ run_id: String(p.run_id), claims: String(p.claims), paid: p.paid === null ? null : String(p.paid) }))).toEqual(byRun);
    } finally {
      duck.closeSync();
      db.close();
    }

    // export --layout tables: the bytes of the delivery, run 2's partitions and manifest.
    const e = await runPrinted("benefits-sync export --run 2 --out again --layout tables", cwd, env);
    expect(e.status, e.stderr).toBe(0);
    const delivered = Object.fromEntries(Object.entries(files(join(cwd, "lake"))).filter(([p]) => p.includes("00000002")));
    expect(files(join(cwd, "again"))).toEqual(delivered);

    // The layout is Parquet's: CSV refused as usage, nothing written.
    const csv = await runPrinted("benefits-sync export --run 2 --out csv-tables --layout tables --format csv", cwd, env);
    expect(csv.status).toBe(2);
    expect(csv.stderr).toContain("--layout tables");
    expect(csv.stderr).toContain("--format parquet");
    expect(existsSync(join(cwd, "csv-tables"))).toBe(false);
    const syncCsv = await runPrinted("benefits-sync sync --out csv-tables --layout tables --format jsonl", cwd, env);
    expect(syncCsv.status).toBe(2);
    expect(existsSync(join(cwd, "csv-tables"))).toBe(false);
  });
});
