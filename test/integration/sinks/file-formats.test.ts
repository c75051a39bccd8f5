/**
 * The delta files read back by a reader we did not write (DuckDB: read_csv, read_json,
 * read_parquet): each format's rows equal the run's `changes`, awkward text round-trips, amounts
 * are exact (DECIMAL in Parquet), dates are dates, and exporting a run again gives the same bytes.
 */
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { exportFolder } from "../../../src/sinks/files/formats.js";
import type { FileFormatName } from "../../../src/sinks/files/folder-sink.js";
import { tempStore, type TempStore } from "../../helpers/temp-store.js";
import { baseData, claim, runSync } from "../../unit/sinks/fixtures.js";

let duck: DuckDBConnection;
beforeAll(async () => {
  duck = await (await DuckDBInstance.create(":memory:")).connect();
});
afterAll(() => duck?.closeSync());
let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.reverse()) c();
  cleanup = [];
});

const NASTY = 'Ana, "the \'great\'"\nsecond line\r\nthird\ttab \\ back';
const FORMULA = '=HYPERLINK("http://x")';
const CITY = "São Paulo 李 Zoë 🙂";

/** Two runs; the second updates a member with awkward text, changes amounts, adds and deletes. */
async function twoRuns(): Promise<{ t: TempStore; run: number; first: number }> {
  const t = tempStore();
  cleanup.push(t.cleanup);
  const r1 = await runSync(t, baseData());
  const d = baseData();
  d.members[0]!.firstName = NASTY;
  d.members[0]!.lastName = FORMULA;
  d.members[0]!.address = { city: CITY };
  Object.assign(d.members[1]!, { createdAt: "2026-01-05T09:00:00.25-05:00" });
  d.members = d.members.filter((m) => m.id !== "m3");
  Object.assign(d.claims[0]!, { claimAmount: "0.29", paidAmount: "-1234.5", allowedAmount: "12345678901234.99" });
  // Not a calendar date, not an instant: NULL, never an error.
  d.claims.push({ ...claim("k9", "2026-02-29"), serviceDateTo: "2026-02-31", createdAt: "2026-02-30T10:00:00Z" });
  const r2 = await runSync(t, d);
  expect(r2.status).toBe("succeeded");
  return { t, run: r2.runId, first: r1.runId };
}

type Row = Record<string, unknown>;
const rows = async (sql: string): Promise<Row[]> => (await duck.runAndReadAll(sql)).getRowObjectsJson() as Row[];
const lit = (p: string) => `'${p.replace(/'/g, "''")}'`;

function changesOf(t: TempStore, run: number, resource: string): string[] {
  return (t.db.prepare("SELECT op, id FROM changes WHERE run_id = ? AND resource = ?").all(run, resource) as { op: string; id: string }[])
    .map((c) => `${c.op} ${c.id}`)
    .sort();
}

const bytesOf = (dir: string) => Object.fromEntries(readdirSync(dir).sort().map((f) => [f, readFileSync(join(dir, f)).toString("base64")]));

describe("delta files read back by DuckDB", () => {
  it("CSV: read_csv gives the run's changes, and awkward text round-trips unchanged", async () => {
    const { t, run } = await twoRuns();
    const f = await exportFolder(t.db, run, join(t.dir, "csv"), "csv");
    for (const r of ["designs", "groups", "plans", "members", "coverages", "claims"]) {
      const got = await rows(`SELECT op, id FROM read_csv(${lit(join(f.dir, `${r}.csv`))}, header = true, all_varchar = true, quote = '"', escape = '"')`);
      expect(got.map((x) => `${x.op} ${x.id}`).sort(), r).toEqual(changesOf(t, run, r));
    }
    const m1 = await rows(`SELECT "firstName", "lastName", "address.city" AS city FROM read_csv(${lit(join(f.dir, "members.csv"))}, header = true, all_varchar = true, quote = '"', escape = '"') WHERE id = 'm1'`);
    expect(m1).toEqual([{ firstName: NASTY, lastName: FORMULA, city: CITY }]);
  });

  it("JSONL: read_json gives the run's changes, whole records, awkward text unchanged", async () => {
    const { t, run } = await twoRuns();
    const f = await exportFolder(t.db, run, join(t.dir, "jsonl"), "jsonl");
    expect(f.files.map((x) => x.file).sort()).toEqual(["claims.jsonl", "coverages.jsonl", "designs.jsonl", "groups.jsonl", "members.jsonl", "plans.jsonl"]);
    for (const r of ["members", "claims", "coverages"]) {
      const got = await rows(`SELECT op, id FROM read_json(${lit(join(f.dir, `${r}.jsonl`))}, format = 'newline_delimited')`);
      expect(got.map((x) => `${x.op} ${x.id}`).sort(), r).toEqual(changesOf(t, run, r));
    }
    const m1 = await rows(`SELECT data.firstName AS f, data.lastName AS l, data.address.city AS c, changed_fields::VARCHAR AS cf FROM read_json(${lit(join(f.dir, "members.jsonl"))}, format = 'newline_delimited') WHERE id = 'm1'`);
    expect(m1).toEqual([{ f: NASTY, l: FORMULA, c: CITY, cf: expect.stringContaining("firstName") }]);
    const k1 = await rows(`SELECT data.claimAmount AS a FROM read_json(${lit(join(f.dir, "claims.jsonl"))}, format = 'newline_delimited') WHERE id = 'k1'`);
    expect(k1).toEqual([{ a: "0.29" }]); // decimal text verbatim
    // An empty file for a resource with no changes (not a missing one).
    expect(readFileSync(join(f.dir, "designs.jsonl"), "utf8")).toBe("");
  });

  it("Parquet: typed columns (DATE, DECIMAL(18,2)), exact amounts, the whole record, and every file readable even when empty", async () => {
    const { t, run } = await twoRuns();
    const f = await exportFolder(t.db, run, join(t.dir, "parquet"), "parquet");
    const claims = lit(join(f.dir, "claims.parquet"));
    const types = Object.fromEntries((await rows(`DESCRIBE SELECT * FROM read_parquet(${claims})`)).map((x) => [x.column_name, x.column_type]));
    expect(types).toMatchObject({ op: "VARCHAR", run_id: "BIGINT", id: "VARCHAR", serviceDateFrom: "DATE", claimAmount: "DECIMAL(18,2)", paidAmount: "DECIMAL(18,2)", memberId: "VARCHAR", data: "JSON" });
    const k1 = await rows(`SELECT "claimAmount"::VARCHAR AS c, "paidAmount"::VARCHAR AS p, "allowedAmount"::VARCHAR AS a, "serviceDateFrom"::VARCHAR AS d FROM read_parquet(${claims}) WHERE id = 'k1'`);
    expect(k1).toEqual([{ c: "0.29", p: "-1234.50", a: "12345678901234.99", d: "2026-02-01" }]);
    const k9 = await rows(`SELECT "serviceDateFrom"::VARCHAR AS f, "serviceDateTo"::VARCHAR AS t, data->>'serviceDateTo' AS raw FROM read_parquet(${claims}) WHERE id = 'k9'`);
    expect(k9).toEqual([{ f: null, t: null, raw: "2026-02-31" }]);
    for (const r of ["designs", "groups", "plans", "members", "coverages", "claims"]) {
      const got = await rows(`SELECT op, id FROM read_parquet(${lit(join(f.dir, `${r}.parquet`))})`);
      expect(got.map((x) => `${x.op} ${x.id}`).sort(), r).toEqual(changesOf(t, run, r));
      expect(f.files.find((x) => x.file === `${r}.parquet`)?.rows).toBe(got.length);
    }
    const m1 = await rows(`SELECT "firstName" AS f, "address_city" AS c, data->>'ssn' AS ssn, "ssn_last4" AS l4 FROM read_parquet(${lit(join(f.dir, "members.parquet"))}) WHERE id = 'm1'`);
    expect(m1).toEqual([{ f: NASTY, c: CITY, ssn: null, l4: "6701" }]);
    const lines = await rows(`SELECT claim_id, line_no, amount::VARCHAR AS amount FROM read_parquet(${lit(join(f.dir, "claim_lines.parquet"))}) ORDER BY claim_id`);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((l) => l.amount === "100.00")).toBe(true);
  });

  it("Parquet parity with CSV: the same columns in the same order (names as the SQLite views), typed, the same values and changed_fields, line_no from 1", async () => {
    const { t, run } = await twoRuns();
    const csvDir = (await exportFolder(t.db, run, join(t.dir, "csv"), "csv")).dir;
    const pqDir = (await exportFolder(t.db, run, join(t.dir, "pq"), "parquet")).dir;
    // The documented typed columns, written out here: dates are DATE, amounts DECIMAL(18,2), counters BIGINT.
    const DATES = ["dateOfBirth", "serviceDateFrom", "serviceDateTo", "processing_receivedDate", "processing_adjudicatedDate", "processing_paidDate"];
    const AMOUNTS = ["claimAmount", "allowedAmount", "paidAmount", "amount"];
    // Instants, as the warehouse's timestamptz: UTC, to the microsecond.
    const INSTANTS = ["createdAt"];
    const expectedType = (c: string) =>
      c === "run_id" || c === "line_no"
        ? "BIGINT"
        : c === "changed_fields" || c === "data"
          ? "JSON"
          : DATES.includes(c)
            ? "DATE"
            : AMOUNTS.includes(c)
              ? "DECIMAL(18,2)"
              : INSTANTS.includes(c)
                ? "TIMESTAMP WITH TIME ZONE"
                : "VARCHAR";
    const isCalendarDate = (v: string) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) && new Date(`${v}T00:00:00Z`).toISOString().slice(0, 10) === v;
    const cents = (v: unknown) => (v === null || v === "" ? null : Math.round(Number(v) * 100));
    const keyOf = (x: Row) => `${String(x.op)} ${String(x.id ?? x.claim_id)} ${String(x.line_no ?? "")}`;
    for (const file of ["members", "claims", "claim_lines"]) {
      const csvRows = await rows(`SELECT * FROM read_csv(${lit(join(csvDir, `${file}.csv`))}, header = true, all_varchar = true, quote = '"', escape = '"')`);
      const csvHeader = readFileSync(join(csvDir, `${file}.csv`), "utf8").split("\r\n")[0]!.split(",");
      const pq = lit(join(pqDir, `${file}.parquet`));
      const described = await rows(`DESCRIBE SELECT * FROM read_parquet(${pq})`);
      const pqColumns = described.map((x) => String(x.column_name));
      expect(pqColumns.at(-1)).toBe("data");
      const shared = pqColumns.slice(0, -1);
      // The same columns in the same order; CSV's own extra columns (fields nobody documented) come after.
      expect(csvHeader.slice(0, shared.length).map((c) => c.replace(/\./g, "_")), file).toEqual(shared);
      for (const x of described) expect(x.column_type, `${file}.${String(x.column_name)}`).toBe(expectedType(String(x.column_name)));
      const pqRows = await rows(`SELECT ${shared.map((c) => (INSTANTS.includes(c) ? `epoch_ms("${c}")::VARCHAR AS "${c}"` : `"${c}"::VARCHAR AS "${c}"`)).join(", ")} FROM read_parquet(${pq})`);
      expect(pqRows.length, file).toBe(csvRows.length);
      expect(pqRows.length, file).toBeGreaterThan(0);
      const byKey = new Map(csvRows.map((x) => [keyOf(x), x]));
      for (const p of pqRows) {
        const c = byKey.get(keyOf(p))!;
        expect(c, keyOf(p)).toBeDefined();
        shared.forEach((col, i) => {
          const cv = c[csvHeader[i]!] ?? null;
          const pv = p[col];
          const where = `${file} ${keyOf(p)} ${col}`;
          if (col === "changed_fields") {
            expect(pv === null ? null : JSON.parse(String(pv)), where).toEqual(cv === null || cv === "" ? null : (JSON.parse(String(cv)) as string[]).map((n) => n.replace(/\./g, "_")));
          } else if (AMOUNTS.includes(col)) expect(cents(pv), where).toBe(cents(cv));
          else if (INSTANTS.includes(col)) expect(pv === null ? null : Number(pv), where).toBe(cv === null || cv === "" || Number.isNaN(Date.parse(String(cv))) || !isCalendarDate(String(cv).slice(0, 10)) ? null : Date.parse(String(cv)));
          else if (DATES.includes(col) && pv === null) expect(cv === null || cv === "" || !isCalendarDate(String(cv)), where).toBe(true);
          else expect(pv, where).toBe(cv === "" ? null : cv);
        });
      }
    }
    const m1 = await rows(`SELECT changed_fields::VARCHAR AS cf FROM read_parquet(${lit(join(pqDir, "members.parquet"))}) WHERE id = 'm1'`);
    expect(JSON.parse(String(m1[0]!.cf))).toEqual(["firstName", "lastName", "address_city"]);
    const lines = await rows(`SELECT claim_id, line_no FROM read_parquet(${lit(join(pqDir, "claim_lines.parquet"))}) WHERE claim_id = 'k9'`);
    expect(lines).toEqual([{ claim_id: "k9", line_no: "1" }]);
  });

  it.each(["csv", "jsonl", "parquet"] as FileFormatName[])("%s: exporting a run again gives the same bytes, and a first run's export has every record", async (format) => {
    const { t, run, first } = await twoRuns();
    const a = await exportFolder(t.db, run, join(t.dir, "a"), format);
    const bytes = bytesOf(a.dir);
    const again = await exportFolder(t.db, run, join(t.dir, "a"), format);
    expect(bytesOf(again.dir)).toEqual(bytes);
    const elsewhere = await exportFolder(t.db, run, join(t.dir, "b"), format);
    expect(bytesOf(elsewhere.dir)).toEqual(bytes);
    const manifest = JSON.parse(readFileSync(join(a.dir, "manifest.json"), "utf8")) as { format: string; runs: number[] };
    expect(manifest).toMatchObject({ format, runs: [run] });
    const firstRun = await exportFolder(t.db, first, join(t.dir, "first"), format);
    const members = firstRun.files.find((x) => x.file === `members.${format}`)!;
    expect(members.rows).toBe(3);
  });
});
