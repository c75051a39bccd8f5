import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startCli } from "../helpers/cli-process.js";

/**
 * The census file is read in chunks, never as one string: a file over the documented limit is
 * refused (exit 2) before it is read, and a large allowed one is read within a memory bound,
 * measured as the peak RSS (VmHWM) of a child process that reads it.
 */
const INPUT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dist", "src", "eligibility", "census-input.js");

let dir: string;
beforeEach(() => void (dir = mkdtempSync(join(tmpdir(), "bsync-census-input-"))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("reading a census file", () => {
  it("a file over the limit (600 MB, sparse) exits 2 naming the limit, its size and what to do, without reading it", async () => {
    const file = join(dir, "huge.csv");
    writeFileSync(file, "employee_id,relationship,first_name,last_name,date_of_birth,ssn\n");
    truncateSync(file, 600 * 1024 * 1024);
    const r = await startCli(["census", "apply", file, "--group", "G-1"], { BENEFITS_BASE_URL: "http://127.0.0.1:9", BENEFITS_API_KEY: "census-input-key-1", BENEFITS_DB: join(dir, "snap.db") }, dir).done;
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain("is 600.0 MB, over the 40.0 MB a census may be");
    expect(r.stderr).toContain("one file per group");
  }, 60_000);

  it("a file within the size limit but over 500,000 rows (narrow rows) exits 2 naming the row limit, nothing planned or sent", async () => {
    const file = join(dir, "narrow.csv");
    const rows = Array.from({ length: 500_001 }, (_, i) => `E${i},self,F,L,1980-01-01,${String(100_000_000 + i).replace(/^(\d{3})(\d{2})/, "$1-$2-")}`);
    writeFileSync(file, `employee_id,relationship,first_name,last_name,date_of_birth,ssn\n${rows.join("\n")}\n`);
    const env = { BENEFITS_BASE_URL: "http://127.0.0.1:9", BENEFITS_API_KEY: "census-input-key-1", BENEFITS_DB: join(dir, "snap.db"), BENEFITS_PII_KEY: "census-input-pii-key-0123456789" };
    const r = await startCli(["census", "apply", file, "--group", "G-1"], env, dir).done;
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain("has more than 500,000 rows, the most a census may have; nothing was planned or sent");
  }, 120_000);

  it("300k rows are read within 500 MB of peak memory (0.40 GB measured; a row object each took 0.74 GB, the whole-file read 1.19 GB)", async () => {
    const file = join(dir, "big.csv");
    const lines = ["employee_id,relationship,first_name,last_name,date_of_birth,ssn,address_line1,city,plan_id"];
    for (let i = 0; i < 300_000; i++) {
      const s = String(100_000_000 + i);
      lines.push(`E${i},self,First${i},Last${i},1980-01-${String(1 + (i % 28)).padStart(2, "0")},${s.slice(0, 3)}-${s.slice(3, 5)}-${s.slice(5)},${i} Main St,Town,plan-1`);
    }
    writeFileSync(file, `${lines.join("\n")}\n`);
    const script = `
      import { readFileSync } from "node:fs";
      const { loadCensus } = await import(process.argv[1]);
      const c = loadCensus(process.argv[2], Buffer.alloc(32, 7));
      const hwm = Number(/VmHWM:\\s+(\\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))[1]);
      process.stdout.write(JSON.stringify({ rows: c.rows.length, problems: c.problems.length, peakMb: Math.round(hwm / 1024) }));`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script, INPUT, file], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect(code, err).toBe(0);
    const r = JSON.parse(out) as { rows: number; problems: number; peakMb: number };
    expect([r.rows, r.problems]).toEqual([300_000, 0]);
    expect(r.peakMb).toBeLessThan(500);
  }, 120_000);
});
