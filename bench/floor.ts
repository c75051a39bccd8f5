/**
 * The least time any first sync can take on this machine, from the work it cannot skip, measured
 * in the same run as the first-sync bar (printed beside it; not a bar of its own):
 *
 * - the fetch-only walk's CPU time, the client's and the sandbox's (they share the machine's cores);
 * - the store's least SQLite work: the first sync's own rows (typed columns and all) inserted into
 *   an empty snapshot in one transaction by the store's insert statement, then its indexes built.
 *   No page groups, checkpoints, seen ids or run bookkeeping: a lower bound of what the store does;
 * - the least encoding: each record's canonical JSON, SSN token, fingerprint and version hash,
 *   timed without the parse (the fetch-only walk parses every page already).
 *
 * The index builds need the last row, so they cannot overlap the walk: the floor is the rest
 * spread over every core, plus the builds on one.
 */
import { createReadStream, rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import { createInterface } from "node:readline";
import BetterSqlite3 from "better-sqlite3";
import { deferIndexes, ensureIndexes } from "../src/store/schema/analyst-schema.js";
import { openDatabase } from "../src/store/file/database.js";
import { Encoder } from "../src/store/walk/prepare-page.js";
import { StoredResources, type WalkedResource } from "../src/store/schema/resources.js";
import { versionStatements } from "../src/store/walk/versions.js";

/** CPU milliseconds (user and system) of this process since `since`. */
export function cpuMs(since?: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
}

/** `store-floor SRC DST`: SRC's current versions written into a new snapshot DST, then indexed. */
export function storeFloor(src: string, dst: string): { insertCpuMs: number; indexCpuMs: number; indexMs: number; rows: number } {
  const from = new BetterSqlite3(src, { readonly: true });
  const rows = StoredResources.map(
    (r) => [r, from.prepare(`SELECT v.id, v.part, v.fp, d.hash, d.data FROM _${r}_v v JOIN _${r}_d d ON d.vid = v.vid WHERE v.valid_to_run IS NULL`).raw().all() as unknown[][]] as const,
  );
  from.close();
  for (const s of ["", "-wal", "-shm"]) rmSync(dst + s, { force: true });
  const db = openDatabase(dst);
  // As a load from empty: every index dropped, built once at the end.
  deferIndexes(db, StoredResources, StoredResources);
  const statements = versionStatements(db);
  const c0 = process.cpuUsage();
  db.transaction(() => {
    for (const [r, rs] of rows) {
      const insert = statements.get(r)!.insert;
      for (const x of rs) insert(x[0] as string, 1, "insert", x[1] as string | null, null, x[2] as number | null, x[3] as string, x[4] as string);
    }
  })();
  const insertCpuMs = cpuMs(c0);
  const c1 = process.cpuUsage();
  const t1 = performance.now();
  ensureIndexes(db);
  const indexMs = performance.now() - t1;
  const indexCpuMs = cpuMs(c1);
  db.close();
  return { insertCpuMs, indexCpuMs, indexMs, rows: rows.reduce((n, [, rs]) => n + rs.length, 0) };
}

/**
 * `encode-floor DUMP`: the encoding of every dumped record, less the parse. Page by page, as the
 * sync sees them (a heap holding every page would make each collection cost more).
 */
export async function encodeFloor(dump: string): Promise<{ encodeCpuMs: number; records: number }> {
  const encoder = new Encoder({ piiKey: Buffer.from("bench-pii-key-0123456789") });
  let encodeCpuMs = 0;
  let records = 0;
  for await (const line of createInterface({ input: createReadStream(dump) })) {
    if (!line) continue;
    const p = JSON.parse(line) as { r: WalkedResource; items: unknown[] };
    const texts = p.items.map((i) => JSON.stringify(i));
    const c0 = process.cpuUsage();
    for (const t of texts) JSON.parse(t);
    const parseMs = cpuMs(c0);
    const c1 = process.cpuUsage();
    records += encoder.prepare(p.r, texts.map((t) => JSON.parse(t) as unknown), texts, true).records.length;
    encodeCpuMs += cpuMs(c1) - parseMs;
  }
  return { encodeCpuMs, records };
}

/** The floor line, from the first round's measurements. */
export function floorLine(m: {
  fetchCpuMs: number;
  fetchSandboxCpuMs: number;
  store: { insertCpuMs: number; indexCpuMs: number; indexMs: number };
  encodeCpuMs: number;
  baselineMs: number;
  sync: { ms: number; cpuMs: number; sandboxCpuMs: number };
}): string {
  const cores = availableParallelism();
  const spread = m.fetchCpuMs + m.fetchSandboxCpuMs + m.store.insertCpuMs + m.encodeCpuMs;
  // All of it spread over every core, the index builds too; and with the builds after the last row.
  const cpuFloor = (spread + m.store.indexCpuMs) / cores;
  const floor = spread / cores + m.store.indexMs;
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const x = (ms: number) => `${(ms / m.baselineMs).toFixed(3)} x the baseline`;
  return (
    `  floor of a first sync on ${cores} cores: ${s(cpuFloor)} = ${x(cpuFloor)} with every part spread over the cores; ` +
    `${s(floor)} = ${x(floor)} with the indexes built after the last row\n` +
    `    [fetch-only walk's CPU ${s(m.fetchCpuMs)} in the client + ${s(m.fetchSandboxCpuMs)} in the sandbox, ` +
    `inserting the rows ${s(m.store.insertCpuMs)}, encoding them ${s(m.encodeCpuMs)}, building the indexes ${s(m.store.indexMs)} (${s(m.store.indexCpuMs)} CPU)]\n` +
    `  the first sync itself: ${s(m.sync.ms)}, ${s(m.sync.cpuMs)} CPU in the client + ${s(m.sync.sandboxCpuMs)} in the sandbox ` +
    `(${s((m.sync.cpuMs + m.sync.sandboxCpuMs) / cores)} over ${cores} cores)`
  );
}
