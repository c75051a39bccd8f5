import { DuckDBInstance } from "@duckdb/node-api";
import BetterSqlite3 from "better-sqlite3";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { expectedState, snapshotState, type State } from "../helpers/expected.js";
import { usePostgres } from "../helpers/pg.js";
import { ALL_CLAIMS, sandboxData } from "../helpers/sandbox-truth.js";
import { expectedSsnToken, ssnLikeIn, ssnsIn } from "../helpers/ssn-oracle.js";

/**
 * A service that names SSN fields in other styles (`SSN`, `dependentSsn`, a spouse's
 * `socialSecurityNumber`, `ssnNumber` in a list of dependents, `SSN-No` three objects deep, one in
 * a coverage), under other names (`SS#`, `socSecNum`, `ssnLast4` holding nine digits, `taxId`,
 * `tin`, `nationalId`, `itin`, `federalTaxId`, `taxpayerId`, `Soc.Sec.#`, `ssn_token` holding
 * nine digits), in typed pairs (`governmentIds[].value` with `type: "SSN"`, a numeric
 * `{kind: "national_id", number}`, `{name: "Social Security Number", identifier}`) and in free
 * text (dashed in `notes`, spaced in a list of strings, NBSP and Unicode dashes, as an object key):
 * not one of those numbers, in any of those forms or as nine digits, reaches the snapshot
 * (members, history, changes, quarantine: the file and its WAL), the CSV, JSONL and Parquet files,
 * the warehouse (pg_dump of it) or what the CLI prints; each arrives as the oracle
 * (test/helpers/ssn-oracle.ts, not the product's rule) says: `<key>_token`/`_last4`, `[ssn:<token>]`
 * in text, and the look-alikes beside them (a zip+4, a routing number, an EIN) as they were.
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

/** Fields of the sandbox's look-alikes: nine digits that are not an SSN, left as they are on purpose. */
const LOOK_ALIKES = new Set(["zipPlus4", "routingNumber"]);

/** A path as a form: `governmentIds[0].value` -> `governmentIds[].value`, an SSN in a key -> `<ssn>`. */
const form = (where: string) => where.replace(/\[\d+\]/g, "[]").replace(/\d{3}\D\d{2}\D\d{4}/g, "<ssn>");

/**
 * Every SSN the service serves, as digits, with the form it was served in: by the oracle's
 * contract; and, found without it, every value that is an SSN as a whole (text or number), every
 * shape inside a text or a key (outside the look-alikes' fields), which the oracle must have found too.
 */
function servedSsns(into: Map<string, string>, missed: string[]): void {
  for (const m of sandboxData(sb).members) {
    const byOracle = ssnsIn(m);
    for (const [d, where] of byOracle) if (!into.has(d)) into.set(d, form(where));
    const walk = (v: unknown, key: string): void => {
      if (LOOK_ALIKES.has(key)) return;
      const seen = (d: string) => byOracle.has(d) || missed.push(`${key} (ending ${d.slice(-4)})`);
      if (typeof v === "number" && Number.isInteger(v) && String(v).length === 9) seen(String(v));
      else if (typeof v === "string") {
        if (/^\d{9}$/.test(v)) seen(v);
        for (const x of ssnLikeIn(v)) if (x.form !== "digits only") seen(x.digits);
      } else if (Array.isArray(v)) v.forEach((e) => walk(e, key));
      else if (v !== null && typeof v === "object") {
        for (const [k, x] of Object.entries(v)) {
          for (const y of ssnLikeIn(k)) seen(y.digits);
          walk(x, k);
        }
      }
    };
    walk(m, "");
  }
}

/** Each form the sandbox plants (src/sandbox/ssn-variants.ts), as `servedSsns` names it. */
const PLANTED_FORMS = [
  "ssn", "dependentSsn", "SSN", "spouse.socialSecurityNumber", "dependents[].ssnNumber", "dependents[].dependent_ssn",
  "employment.employer.ids.SSN-No", "social_security_no", "household[].person.SocialSecurityNo", "household[].person.spouseSSN",
  "coverages[].beneficiary.memberSSNs[]", "SS#", "guardian.socSecNum", "ssnLast4", "taxId", "payee.tin", "nationalId",
  "governmentIds[].value", "notes (in text)", "legacy.ssn_token", "itin", "identifiers[].number", "documents[].identifier",
  "comments[] (in text)", "lookup.<ssn> (in a key)", "beneficiaryIds.Soc.Sec.#", "address.line2 (in text)", "federalTaxId",
  "taxpayerId", "employer.contactNote (in text)",
];

/** `resource.key: n record(s)` for each top-level key in which the snapshot differs from what the oracle expects. */
function differingKeys(got: State, want: State): string[] {
  const n = new Map<string, number>();
  const bump = (k: string) => n.set(k, (n.get(k) ?? 0) + 1);
  for (const r of Object.keys(want) as (keyof State)[]) {
    for (const [id, w] of want[r]) {
      const g = got[r].get(id);
      if (g === undefined) {
        bump(`${r} (missing)`);
        continue;
      }
      const a = w as Record<string, unknown>;
      const b = g as Record<string, unknown>;
      for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) if (JSON.stringify(a[k]) !== JSON.stringify(b[k])) bump(`${r}.${k}`);
    }
    for (const id of got[r].keys()) if (!want[r].has(id)) bump(`${r} (extra)`);
  }
  return [...n].map(([k, c]) => `${k}: ${c} record(s)`).sort();
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
    const ssns = new Map<string, string>();
    const missed: string[] = [];
    servedSsns(ssns, missed);
    // The premise: the service does serve SSNs under other keys and in text, in every planted form.
    expect(ssns.size).toBeGreaterThan(sandboxData(sb).members.length + 50);
    const forms = new Set(ssns.values());
    for (const f of PLANTED_FORMS) expect(forms.has(f), `the sandbox serves no SSN as ${f}`).toBe(true);
    sb.setFaults({ seed: 3, itemWithoutIdEvery: 7 });
    const first = await startCli(args, env, cwd).done;
    expect(first.code, first.stderr).toBe(0);
    sb.setFaults({});
    const reader = new BetterSqlite3(db, { readonly: true });
    try {
      reader.prepare("SELECT COUNT(*) FROM members").get();
      await sb.advance();
      servedSsns(ssns, missed);
      expect(missed, "values shaped like an SSN that the oracle does not take for one").toEqual([]);
      const second = await startCli(args, env, cwd).done;
      expect(second.code, second.stderr).toBe(0);
      const key = Buffer.from(readFileSync(`${db}.pii-key`, "utf8").trim(), "hex");

      // Tokenized where they were: the views hold `<key>_token` and `<key>_last4`.
      const count = (sql: string) => reader.prepare(sql).pluck().get() as number;
      expect(count("SELECT COUNT(*) FROM quarantine")).toBeGreaterThan(0);
      for (const k of ["dependentSsn", "SSN", "socialSecurityNumber", "ssnNumber", "SSN-No", "social_security_no", "SocialSecurityNo"]) {
        expect(count(`SELECT COUNT(*) FROM members WHERE data LIKE '%"${k}_token":"%' AND data LIKE '%"${k}_last4":"%'`), k).toBeGreaterThan(0);
      }
      expect(count(`SELECT COUNT(*) FROM coverages WHERE data LIKE '%"memberSSNs_token"%'`)).toBeGreaterThan(0);
      expect(count(`SELECT COUNT(*) FROM members_history WHERE data LIKE '%"dependentSsn_last4"%'`)).toBeGreaterThan(0);
      expect(count(`SELECT COUNT(*) FROM change_records WHERE resource = 'members' AND after LIKE '%"spouseSSN_token"%'`)).toBeGreaterThan(0);
      // Every member and coverage as the oracle masks it (look-alikes unchanged); which keys differ, in how many records.
      expect.soft(differingKeys(snapshotState(reader), expectedState(sandboxData(sb), key)), "keys the snapshot holds otherwise than the oracle").toEqual([]);

      const dump = execFileSync("pg_dump", ["--dbname", url, "--data-only"], { maxBuffer: 1 << 28 }).toString("utf8");
      expect(dump).toContain("socialSecurityNumber_token");
      const parquet = await parquetText(filesUnder(join(cwd, "lake")).filter((f) => f.endsWith(".parquet")));
      expect(parquet).toContain("dependentSsn_token");
      const places: [string, string][] = [
        ...[db, `${db}-wal`, `${db}-shm`].filter(existsSync).map((f) => [f, readFileSync(f).toString("utf8")] as [string, string]),
        ...[...filesUnder(join(cwd, "csv")), ...filesUnder(join(cwd, "feed")), ...filesUnder(join(cwd, "lake"))].map((f) => [f, readFileSync(f).toString("utf8")] as [string, string]),
        ["parquet rows", parquet],
        ["pg_dump", dump],
        ...[first, second].flatMap((r, i) => [[`stdout ${i}`, r.stdout], [`stderr ${i}`, r.stderr]] as [string, string][]),
      ];
      // Present as the oracle's token in every output: a note's SSN as `[ssn:<token>]`, a typed pair's as `value_token`.
      const inNotes = [...ssns].filter(([, f]) => f === "notes (in text)").map(([d]) => `[ssn:${expectedSsnToken(d, key)}]`);
      const inPairs = [...ssns].filter(([, f]) => f === "governmentIds[].value").map(([d]) => expectedSsnToken(d, key));
      for (const [where, text] of [["jsonl", filesUnder(join(cwd, "feed")).map((f) => readFileSync(f, "utf8")).join("\n")], ["parquet rows", parquet], ["pg_dump", dump]]) {
        expect.soft(inNotes.some((t) => text!.includes(t)), `${where}: a note's SSN as [ssn:<token>]`).toBe(true);
        expect.soft(text!.includes("value_token") && inPairs.some((t) => text!.includes(t)), `${where}: governmentIds[].value_token`).toBe(true);
      }
      expect(places.filter(([f]) => f.endsWith(".csv")).length).toBeGreaterThan(3);
      // Which forms leak, and where: one line per form, naming every place that holds one of its SSNs.
      const leaks = new Map<string, Set<string>>();
      for (const [where, text] of places) {
        for (const x of ssnLikeIn(text)) {
          const f = ssns.get(x.digits);
          if (f !== undefined) leaks.set(f, (leaks.get(f) ?? new Set()).add(`${where.replace(cwd, "")} (${x.form})`));
        }
      }
      const leaked = [...leaks].map(([f, at]) => `${f}: ${[...at].sort().join(", ")}`).sort();
      expect(leaked, "planted SSNs found in plain, by the form they were served in").toEqual([]);
    } finally {
      reader.close();
    }
  });
});
