/**
 * Measurements of the sinks section, each in its own process:
 *   node dist/bench/sinks-worker.js pg-load     DB URL RUN        our Postgres load of runs up to RUN
 *   node dist/bench/sinks-worker.js pg-csv      DB RUN FILE       the claim rows our load copies, as CSV, and their lines
 *                                                                 as FILE.lines.csv (the warehouse's claim_lines rows; not timed)
 *   node dist/bench/sinks-worker.js csv-export  DB RUN DIR        our CSV export of run RUN (every resource)
 *   node dist/bench/sinks-worker.js csv-bare    DB RUN FILE       baseline: the same claim rows, bare csv-stringify to a file
 * Prints one JSON line: {ms, rows, maxRssMb}.
 */
import { stringify } from "csv-stringify";
import { closeSync, createWriteStream, openSync, writeSync } from "node:fs";
import { stringify as stringifySync } from "csv-stringify/sync";
import { once } from "node:events";
import { openDatabase } from "../src/store/database.js";
import { exportFolder } from "../src/sinks/files/formats.js";
import { flatten } from "../src/sinks/csv/flatten.js";
import { discoverColumns } from "../src/sinks/csv/csv-format.js";
import { postgresSink } from "../src/sinks/postgres/postgres-sink.js";
import { writeDelivery } from "../src/sinks/sink.js";
import { runDeltas } from "../src/sinks/run-deltas.js";
import { asDate, asDecimal, asText, typedFields, valueAt } from "../src/sinks/typed-fields.js";

const maxRssMb = () => Math.round(process.resourceUsage().maxRSS / 1024);
const out = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ ...o, maxRssMb: maxRssMb() })}\n`);

/** Write rows (arrays of strings or null) through csv-stringify's stream into a file. */
async function csvFile(file: string, header: string[], rows: Iterable<(string | null)[]>): Promise<number> {
  const w = createWriteStream(file);
  const s = stringify({ header: true, columns: header, record_delimiter: "\r\n" });
  s.pipe(w);
  let n = 0;
  for (const r of rows) {
    n++;
    if (!s.write(r)) await once(s, "drain");
  }
  s.end();
  await once(w, "finish");
  return n;
}

async function main(): Promise<void> {
  const [mode, dbPath, a, b] = process.argv.slice(2) as [string, string, string, string];
  const db = openDatabase(dbPath, { readonly: mode !== "pg-load" });
  if (mode === "pg-load") {
    const t0 = performance.now();
    const load = await writeDelivery(db, postgresSink(a), { folderRun: Number(b), runs: [Number(b)] });
    out({ ms: performance.now() - t0, rows: load.changes.claims ?? 0, runs: load.loadedRuns });
  } else if (mode === "pg-csv") {
    // The columns of the warehouse's claims table, as the sink fills them: id, typed fields, data.
    const fields = typedFields("claims");
    const conv = fields.map((f) => (f.type === "date" ? asDate : f.type === "decimal" ? asDecimal : asText));
    const lines: (string | null)[][] = [];
    const rows = function* () {
      for (const d of runDeltas(db, "claims", [Number(a)])) {
        const run = String(d.runId);
        const at = (path: string) => asText(valueAt(d.data, path));
        const ls = (d.data as { lines?: unknown }).lines;
        (Array.isArray(ls) ? (ls as Record<string, unknown>[]) : []).forEach((l, i) => {
          lines.push([d.id, String(i + 1), at("memberId"), at("groupId"), asDate(valueAt(d.data, "serviceDateFrom")), asText(valueAt(l, "code")), asDecimal(valueAt(l, "amount")), run]);
        });
        yield [d.id, ...fields.map((f, i) => conv[i]!(valueAt(d.data, f.path))), JSON.stringify(d.data), run];
      }
    };
    const n = await csvFile(b, ["id", ...fields.map((f) => f.name), "data", "valid_from_run"], rows());
    await csvFile(`${b}.lines.csv`, ["claim_id", "line_no", "memberId", "groupId", "serviceDateFrom", "code", "amount", "valid_from_run"], lines);
    out({ ms: 0, rows: n });
  } else if (mode === "csv-export") {
    const t0 = performance.now();
    const f = await exportFolder(db, Number(a), b, "csv");
    out({ ms: performance.now() - t0, rows: f.files.find((x) => x.file === "claims.csv")?.rows ?? 0 });
  } else if (mode === "csv-bare") {
    // Baseline: the same claim and claim-line rows and columns (read from the snapshot in one
    // pass, flattened), turned to CSV by csv-stringify in batches of 5,000 and written with
    // writeSync: no column discovery pass, no SSN rule, no hash, no fsync, no rename.
    const t0 = performance.now();
    const skip = new Set(["lines"]);
    const { columns } = discoverColumns("claims", [], skip);
    const lineCols = ["code", "amount"];
    const opts = { record_delimiter: "\r\n" } as const;
    const files = [openSync(`${b}.claims.csv`, "w"), openSync(`${b}.lines.csv`, "w")] as const;
    const batches: string[][][] = [[["op", "run_id", "id", "changed_fields", ...columns]], [["op", "run_id", "claim_id", "line_no", ...lineCols]]];
    const flush = (i: 0 | 1) => {
      writeSync(files[i], stringifySync(batches[i]!, opts));
      batches[i] = [];
    };
    let n = 0;
    const stmt = db.prepare("SELECT id, valid_from_run, data FROM _claims_v WHERE valid_from_run = ?");
    for (const r of stmt.iterate(Number(a)) as IterableIterator<{ id: string; valid_from_run: number; data: string }>) {
      const rec = JSON.parse(r.data) as Record<string, unknown>;
      const f = flatten(rec, skip);
      const run = String(r.valid_from_run);
      batches[0]!.push(["insert", run, r.id, "", ...columns.map((c) => f[c] ?? "")]);
      ((rec.lines as Record<string, unknown>[] | undefined) ?? []).forEach((l, i) => {
        const lf = flatten(l);
        batches[1]!.push(["insert", run, r.id, String(i + 1), ...lineCols.map((c) => lf[c] ?? "")]);
      });
      if (++n % 5000 === 0) {
        flush(0);
        flush(1);
      }
    }
    flush(0);
    flush(1);
    for (const fd of files) closeSync(fd);
    out({ ms: performance.now() - t0, rows: n });
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  db.close();
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
