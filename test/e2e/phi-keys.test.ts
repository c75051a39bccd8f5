import { DuckDBInstance } from "@duckdb/node-api";
import BetterSqlite3 from "better-sqlite3";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { usePostgres } from "../helpers/pg.js";
import { ALL_CLAIMS, sandboxData } from "../helpers/sandbox-truth.js";

/**
 * A service that names SSN fields in other styles (`SSN`, `dependentSsn`, a spouse's
 * `socialSecurityNumber`, `ssnNumber` in a list of dependents, `SSN-No` three objects deep, one in
 * a coverage): not one of those numbers, dashed or digits only, reaches the snapshot (members,
 * history, changes, quarantine: the file and its WAL), the CSV, JSONL and Parquet files, the
 * warehouse (pg_dump of it) or what the CLI prints; and each arrives as `<key>_token`/`_last4`.
 */
const pg = usePostgres();
let sb: Sandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ members: 200, groups: 2, seed: 31, extraSsnKeys: 0.6 });
  dir = mkdtempSync(join(tmpdir(), "bsync-phi-keys-"));
});
afterAll(async () => {
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every string value the service serves that is an SSN as a whole (whatever its key): digits only. */
function servedSsns(): Set<string> {
  const out = new Set<string>();
  const walk = (v: unknown): void => {
    if (typeof v === "string" && /^\d{3}-?\d{2}-?\d{4}$/.test(v)) out.add(v.replace(/-/g, ""));
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(sandboxData(sb).members);
  return out;
}

function filesUnder(d: string): string[] {
  return readdirSync(d, { recursive: true, encoding: "utf8" })
    .map((f) => join(d, f))
    .filter((f) => statSync(f).isFile());
}

async function parquetText(files: string[]): Promise<string> {
  const conn = await (await DuckDBInstance.create(":memory:")).connect();
  let text = "";
  for (const f of files) {
    const r = await conn.runAndReadAll(`SELECT * FROM read_parquet('${f.replace(/'/g, "''")}')`);
    text += JSON.stringify(r.getRowObjectsJson());
  }
  return text;
}

describe("SSN fields named in any style, at any depth", () => {
  it("are tokenized in the snapshot and reach no file, warehouse or output in plain", async (ctx) => {
    const url = await pg.freshDatabase(ctx);
    const cwd = mkdtempSync(join(dir, "run-"));
    writeFileSync(
      join(cwd, "benefits-sync.config.json"),
      JSON.stringify({ sinks: { wh: { type: "postgres", urlEnv: "WH_URL" }, lake: { type: "folder", dir: "lake", format: "parquet" }, feed: { type: "folder", dir: "feed", format: "jsonl" } } }),
    );
    const db = join(cwd, "snap.db");
    const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db, WH_URL: url };
    const args = ["sync", "--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to, "--out", "csv", "--json"];
    const ssns = servedSsns();
    // The premise: the service does serve SSNs under other keys (more than one per member, some undashed).
    expect(ssns.size).toBeGreaterThan(sandboxData(sb).members.length + 50);
    sb.setFaults({ seed: 3, itemWithoutIdEvery: 7 });
    const first = await startCli(args, env, cwd).done;
    expect(first.code, first.stderr).toBe(0);
    sb.setFaults({});
    const reader = new BetterSqlite3(db, { readonly: true });
    try {
      reader.prepare("SELECT COUNT(*) FROM members").get();
      await sb.advance();
      for (const s of servedSsns()) ssns.add(s);
      const second = await startCli(args, env, cwd).done;
      expect(second.code, second.stderr).toBe(0);

      // Tokenized where they were: the views hold `<key>_token` and `<key>_last4`.
      const count = (sql: string) => reader.prepare(sql).pluck().get() as number;
      expect(count("SELECT COUNT(*) FROM quarantine")).toBeGreaterThan(0);
      for (const key of ["dependentSsn", "SSN", "socialSecurityNumber", "ssnNumber", "SSN-No", "social_security_no", "SocialSecurityNo"]) {
        expect(count(`SELECT COUNT(*) FROM members WHERE data LIKE '%"${key}_token":"%' AND data LIKE '%"${key}_last4":"%'`), key).toBeGreaterThan(0);
      }
      expect(count(`SELECT COUNT(*) FROM coverages WHERE data LIKE '%"memberSSNs_token"%'`)).toBeGreaterThan(0);
      expect(count(`SELECT COUNT(*) FROM members_history WHERE data LIKE '%"dependentSsn_last4"%'`)).toBeGreaterThan(0);
      expect(count(`SELECT COUNT(*) FROM change_records WHERE resource = 'members' AND after LIKE '%"spouseSSN_token"%'`)).toBeGreaterThan(0);

      const dump = execFileSync("pg_dump", ["--dbname", url, "--data-only"], { maxBuffer: 1 << 28 }).toString("latin1");
      expect(dump).toContain("socialSecurityNumber_token");
      const parquet = await parquetText(filesUnder(join(cwd, "lake")).filter((f) => f.endsWith(".parquet")));
      expect(parquet).toContain("dependentSsn_token");
      const places: [string, string][] = [
        ...[db, `${db}-wal`, `${db}-shm`].filter(existsSync).map((f) => [f, readFileSync(f).toString("latin1")] as [string, string]),
        ...[...filesUnder(join(cwd, "csv")), ...filesUnder(join(cwd, "feed")), ...filesUnder(join(cwd, "lake"))].map((f) => [f, readFileSync(f).toString("latin1")] as [string, string]),
        ["parquet rows", parquet],
        ["pg_dump", dump],
        ...[first, second].flatMap((r, i) => [[`stdout ${i}`, r.stdout], [`stderr ${i}`, r.stderr]] as [string, string][]),
      ];
      expect(places.filter(([f]) => f.endsWith(".csv")).length).toBeGreaterThan(3);
      for (const [where, text] of places) {
        for (const m of text.matchAll(/(?<!\d)(\d{3}-\d{2}-\d{4}|\d{9})(?!\d)/g)) {
          expect(ssns.has(m[1]!.replace(/-/g, "")), `an SSN (ending ${m[1]!.slice(-4)}) in ${where}`).toBe(false);
        }
      }
    } finally {
      reader.close();
    }
  }, 600_000);
});
