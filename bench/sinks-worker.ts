/**
 * Measurements of the sinks section, each in its own process:
 *   node dist/bench/sinks-worker.js sync-updates BASE KEY FROM TO DB SHARE
 *                                                                 a sync of groups and claims in which SHARE (0-1) of the
 *                                                                 claims come back changed (status, adjudication date, for a
 *                                                                 third of them a line's amount): the run of updates (not timed)
 *   node dist/bench/sinks-worker.js pg-load     DB URL RUN        our Postgres load of runs up to RUN
 *   node dist/bench/sinks-worker.js pg-csv      DB RUN FILE       the claim rows our load of RUN copies (op, changed_fields
 *                                                                 included), as CSV; their lines as FILE.lines.csv (the
 *                                                                 warehouse's claim_lines rows) and the run's field changes as
 *                                                                 FILE.fc.csv (its field_changes rows); not timed
 *   node dist/bench/sinks-worker.js csv-export  DB RUN DIR        our CSV export of run RUN (every resource)
 *   node dist/bench/sinks-worker.js csv-bare    DB RUN FILE       baseline: the same claim rows (op, changed fields in column
 *                                                                 order), bare csv-stringify to a file
 * Prints one JSON line: {ms, rows, maxRssMb} (`lines`, `fieldChanges`: the other files' rows).
 */
import { stringify } from "csv-stringify";
import { closeSync, createWriteStream, openSync, writeSync } from "node:fs";
import { stringify as stringifySync } from "csv-stringify/sync";
import { once } from "node:events";
import { createClient } from "../src/api/client.js";
import type { PageSource } from "../src/extract/page-source.js";
import { sync } from "../src/pipeline/sync.js";
import { openDatabase } from "../src/store/file/database.js";
import { ViewColumns, columnName } from "../src/store/schema/resources.js";
import { openWorkerSnapshot } from "../src/store/worker-port.js";
import { exportFolder } from "../src/sinks/files/formats.js";
import { orderChangedFields } from "../src/sinks/files/layout.js";
import { flatten } from "../src/sinks/csv/flatten.js";
import { discoverColumns } from "../src/sinks/csv/csv-format.js";
import { postgresSink } from "../src/sinks/postgres/postgres-sink.js";
import { warehouseColumns } from "../src/sinks/postgres/warehouse-schema.js";
import { writeDelivery } from "../src/sinks/sink.js";
import { runDeltas } from "../src/sinks/run-deltas.js";
import { asDate, asDecimal, asText, valueAt } from "../src/sinks/typed-fields.js";

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

/** A stable number in [0, 1000) for an id (FNV-1a): which claims the updates run changes. */
function bucket(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193) >>> 0;
  return h % 1000;
}

/** `amount` one cent more, as decimal text. */
const plusCent = (amount: unknown): unknown => {
  if (typeof amount !== "string" || !/^\d+\.\d{2}$/.test(amount)) return amount;
  const cents = Number(amount.replace(".", "")) + 1;
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;
};

/** A claim as the updates run sees it when it is one of the `share` changed: its status moved on, adjudicated the day after, a line repriced for a third. */
function rewrite(text: string, share: number): string {
  const c = JSON.parse(text) as Record<string, unknown>;
  const b = bucket(String(c.id));
  if (b >= share * 1000) return text;
  const next: Record<string, string> = { pending: "paid", paid: "denied", denied: "paid" };
  c.claimStatus = next[String(c.claimStatus)] ?? "paid";
  c.processing = { ...((c.processing as Record<string, unknown> | null) ?? {}), adjudicatedDate: "2026-01-16" };
  const lines = c.lines;
  if (b % 3 === 0 && Array.isArray(lines) && lines.length > 0) {
    c.lines = lines.map((l: Record<string, unknown>, i) => (i === 0 ? { ...l, amount: plusCent(l.amount) } : l));
  }
  return JSON.stringify(c);
}

/** The second sync of the section: the same service, `share` of its claims changed on the way in. */
async function syncUpdates(base: string, key: string, from: string, to: string, dbPath: string, share: number): Promise<void> {
  const c = createClient({ baseUrl: base, apiKey: key, concurrency: 4 });
  const source: PageSource = {
    pages: (r, f, o) => c.pages(r, f, o),
    async *rawPages(r, f, o) {
      if (r !== "claims") {
        yield* c.rawPages(r, f, o);
        return;
      }
      // Not recognised by its bytes: the pages are the same as the first sync's, their claims are not.
      const { known: _known, ...rest } = o ?? {};
      for await (const page of c.rawPages(r, f, rest)) yield { ...page, items: page.items.map((t) => rewrite(t, share)) };
    },
  };
  openDatabase(dbPath).close();
  const store = await openWorkerSnapshot(dbPath, { piiKey: Buffer.from("bench-pii-key-0123456789") });
  const report = await sync({ source, store, claimsWindow: { from, to }, resources: ["groups", "claims"], groupConcurrency: 4 });
  await store.close();
  await c.close();
  const claims = report.resources.claims;
  out({ ms: 0, status: report.status, error: report.error?.message, updated: claims?.updated ?? 0, inserted: claims?.inserted ?? 0 });
}

async function main(): Promise<void> {
  const [mode, dbPath, a, b] = process.argv.slice(2) as [string, string, string, string];
  if (mode === "sync-updates") {
    const [base, key, from, to, path, share] = process.argv.slice(3) as [string, string, string, string, string, string];
    return syncUpdates(base, key, from, to, path, Number(share));
  }
  const db = openDatabase(dbPath, { readonly: mode !== "pg-load" });
  if (mode === "pg-load") {
    const t0 = performance.now();
    const load = await writeDelivery(db, postgresSink(a), { folderRun: Number(b), runs: [Number(b)] });
    out({ ms: performance.now() - t0, rows: load.changes.claims ?? 0, runs: load.loadedRuns });
  } else if (mode === "pg-csv") {
    // The columns of the warehouse's claims table, as the sink fills them: id, typed fields, data,
    // the run, how the version began (op, changed_fields); the run's deletes have no row there.
    const columns = warehouseColumns("claims");
    const paths = ViewColumns.claims;
    const lines: (string | null)[][] = [];
    const rows = function* () {
      for (const d of runDeltas(db, "claims", [Number(a)])) {
        if (d.op === "delete") continue;
        const run = String(d.runId);
        const at = (path: string) => asText(valueAt(d.data, path));
        const ls = (d.data as { lines?: unknown }).lines;
        (Array.isArray(ls) ? (ls as Record<string, unknown>[]) : []).forEach((l, i) => {
          lines.push([d.id, String(i + 1), at("memberId"), at("groupId"), asDate(valueAt(d.data, "serviceDateFrom")), asText(valueAt(l, "code")), asDecimal(valueAt(l, "amount")), run]);
        });
        yield [d.id, ...columns.map((c, i) => c.text(valueAt(d.data, paths[i]!))), JSON.stringify(d.data), run, d.op, d.changedFields === null ? null : JSON.stringify(d.changedFields)];
      }
    };
    const n = await csvFile(b, ["id", ...columns.map((c) => c.name.slice(1, -1)), "data", "valid_from_run", "op", "changed_fields"], rows());
    await csvFile(`${b}.lines.csv`, ["claim_id", "line_no", "memberId", "groupId", "serviceDateFrom", "code", "amount", "valid_from_run"], lines);
    // The run's field changes as the sink writes them: the value at the path before and after (JSON; null for none).
    const documented = new Set(paths);
    const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));
    const changes = function* () {
      const stmt = db.prepare(
        "SELECT n.id, n.changed_fields, nd.data AS after, pd.data AS before FROM _claims_v n JOIN _claims_v p ON p.id = n.id AND p.valid_to_run = n.valid_from_run AND p.ended_by = 'update' JOIN _claims_d nd ON nd.vid = n.vid JOIN _claims_d pd ON pd.vid = p.vid WHERE n.valid_from_run = ? AND n.op = 'update'",
      );
      for (const r of stmt.iterate(Number(a)) as IterableIterator<{ id: string; changed_fields: string; after: string; before: string }>) {
        const [before, after] = [JSON.parse(r.before) as Record<string, unknown>, JSON.parse(r.after) as Record<string, unknown>];
        for (const field of JSON.parse(r.changed_fields) as string[]) {
          yield [a, "claims", r.id, field, documented.has(field) ? columnName(field) : null, json(valueAt(before, field)), json(valueAt(after, field))];
        }
      }
    };
    const fc = await csvFile(`${b}.fc.csv`, ["run_id", "resource", "id", "field", "column_name", "old_value", "new_value"], changes());
    out({ ms: 0, rows: n, lines: lines.length, fieldChanges: fc });
  } else if (mode === "csv-export") {
    const t0 = performance.now();
    const f = await exportFolder(db, Number(a), b, "csv");
    out({ ms: performance.now() - t0, rows: f.files.find((x) => x.file === "claims.csv")?.rows ?? 0, lines: f.files.find((x) => x.file === "claim_lines.csv")?.rows ?? 0 });
  } else if (mode === "csv-bare") {
    // Baseline: the same claim and claim-line rows and columns (read from the snapshot in one
    // pass, flattened; an update's changed field paths in column order, as the sink writes them),
    // turned to CSV by csv-stringify in batches of 5,000 and written with writeSync: no column
    // discovery pass, no SSN rule, no hash, no fsync, no rename.
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
    let lineRows = 0;
    const run = Number(a);
    // The run's changes: what began in it (inserts, updates), then what it deleted (last values).
    const began = db.prepare("SELECT v.op, v.id, d.data, v.changed_fields FROM _claims_v v JOIN _claims_d d ON d.vid = v.vid WHERE v.valid_from_run = ?");
    const deleted = db.prepare("SELECT 'delete' AS op, v.id, d.data, NULL AS changed_fields FROM _claims_v v JOIN _claims_d d ON d.vid = v.vid WHERE v.valid_to_run = ? AND v.ended_by = 'delete'");
    for (const stmt of [began, deleted]) {
      for (const r of stmt.iterate(run) as IterableIterator<{ op: string; id: string; data: string; changed_fields: string | null }>) {
        const rec = JSON.parse(r.data) as Record<string, unknown>;
        const f = flatten(rec, skip);
        const changed = r.changed_fields === null ? "" : JSON.stringify(orderChangedFields("claims", JSON.parse(r.changed_fields) as string[]));
        batches[0]!.push([r.op, a, r.id, changed, ...columns.map((c) => f[c] ?? "")]);
        ((rec.lines as Record<string, unknown>[] | undefined) ?? []).forEach((l, i) => {
          const lf = flatten(l);
          batches[1]!.push([r.op, a, r.id, String(i + 1), ...lineCols.map((c) => lf[c] ?? "")]);
          lineRows++;
        });
        if (++n % 5000 === 0) {
          flush(0);
          flush(1);
        }
      }
    }
    flush(0);
    flush(1);
    for (const fd of files) closeSync(fd);
    out({ ms: performance.now() - t0, rows: n, lines: lineRows });
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  db.close();
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
