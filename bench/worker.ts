/**
 * One measurement, in its own process so that its time and peak memory are its own:
 *   node dist/bench/worker.js fetch  BASE KEY FROM TO [resources]
 *   node dist/bench/worker.js fetch-raw BASE KEY FROM TO [resources]   (items split, not parsed)
 *   node dist/bench/worker.js dump   BASE KEY FROM TO FILE [resources]
 *   node dist/bench/worker.js insert FILE DB
 *   node dist/bench/worker.js naive  BASE KEY FROM TO DB    (the walk, each item's JSON under a primary key)
 *   node dist/bench/worker.js sync   BASE KEY FROM TO DB [resources]
 *   node dist/bench/worker.js store-floor SRC_DB DB   |   encode-floor FILE   (see floor.ts)
 * Prints one JSON line: {ms, maxRssMb, cpuMs (the whole process's, every thread), ...}.
 */
import BetterSqlite3 from "better-sqlite3";
import { createReadStream, createWriteStream, statSync } from "node:fs";
import { createInterface } from "node:readline";
import pLimit from "p-limit";
import { createClient, type ServiceClient } from "../src/api/client.js";
import { fanOutScopes, groupNumbers, requestFilters, type ClaimsWindow } from "../src/extract/scopes.js";
import type { PageSource } from "../src/extract/page-source.js";
import { sync } from "../src/pipeline/sync.js";
import { openDatabase } from "../src/store/file/database.js";
import { openWorkerSnapshot } from "../src/store/worker-port.js";
import { WalkedResources, type WalkedResource } from "../src/store/schema/resources.js";
import { scopeOf, type Scope } from "../src/store/walk/scopes.js";
import { cpuMs, encodeFloor, storeFloor } from "./floor.js";

const GROUP_CONCURRENCY = 4;
const HTTP_CONCURRENCY = 4;

function client(base: string, key: string): ServiceClient {
  return createClient({ baseUrl: base, apiKey: key, concurrency: HTTP_CONCURRENCY });
}

/**
 * A PageSource that counts the requests of each scope: one per page, plus the final empty page
 * when the walk did not end on `hasMore: false` (or saw no page at all).
 */
function counting(source: PageSource) {
  const perScope = new Map<string, number>();
  const wrapped: PageSource = {
    async *pages(resource, filters, opts) {
      const key = scopeOf(resource, filters ?? {}).key;
      let requests = 0;
      let endedByHasMore = false;
      for await (const page of source.pages(resource, filters, opts)) {
        requests++;
        endedByHasMore = page.next === undefined;
        yield page;
      }
      perScope.set(key, requests + (endedByHasMore ? 0 : 1));
    },
  };
  return { source: wrapped, perScope };
}

/** The same walk the sync does (designs, groups, then members and claims fanned out by group), storing nothing. */
async function walkOnly(source: PageSource, resources: readonly WalkedResource[], window: ClaimsWindow, onPage?: (r: WalkedResource, items: unknown[]) => void) {
  let records = 0;
  const walk = async (s: Scope, keep?: unknown[]) => {
    for await (const page of source.pages(s.resource, requestFilters(s))) {
      records += page.items.length;
      keep?.push(...page.items);
      onPage?.(s.resource, page.items);
    }
  };
  if (resources.includes("designs")) await walk(scopeOf("designs"));
  const groups: unknown[] = [];
  await walk(scopeOf("groups"), groups);
  const numbers = groupNumbers(groups);
  const fanned = resources.filter((r): r is "members" | "claims" => r === "members" || r === "claims");
  const limit = pLimit(GROUP_CONCURRENCY);
  await Promise.all(fanned.flatMap((r) => fanOutScopes(r, numbers, window)).map((s) => limit(() => walk(s))));
  return records;
}

const maxRssMb = () => Math.round(process.resourceUsage().maxRSS / 1024);

async function main(): Promise<void> {
  const [mode, ...a] = process.argv.slice(2);
  const out = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ ...o, maxRssMb: maxRssMb(), cpuMs: cpuMs() })}\n`);
  const resourcesArg = (s: string | undefined) => (s ? (s.split(",") as WalkedResource[]) : [...WalkedResources]);
  if (mode === "fetch" || mode === "fetch-raw") {
    const [base, key, from, to, res] = a as [string, string, string, string, string?];
    const c = client(base, key);
    // fetch-raw: the items' text is split out but never parsed (the group list excepted, which the fan-out reads).
    const raw: PageSource = { pages: (r, f, o) => (r === "groups" ? c.pages(r, f, o) : c.rawPages(r, f, o)) };
    const counted = counting(mode === "fetch" ? c : raw);
    const t0 = performance.now();
    const records = await walkOnly(counted.source, resourcesArg(res), { from, to });
    const ms = performance.now() - t0;
    const chains = [...counted.perScope].filter(([k]) => k.startsWith("members")).map(([, n]) => n);
    out({ ms, records, requests: c.stats.requests, memberRequests: chains.reduce((x, y) => x + y, 0), longestMemberChain: Math.max(0, ...chains), groupsRequests: counted.perScope.get("groups") ?? 0 });
    await c.close();
  } else if (mode === "dump") {
    const [base, key, from, to, file, res] = a as [string, string, string, string, string, string?];
    const c = client(base, key);
    const w = createWriteStream(file);
    await walkOnly(c, resourcesArg(res), { from, to }, (r, items) => w.write(`${JSON.stringify({ r, items })}\n`));
    await new Promise((res) => w.end(res));
    await c.close();
    out({ ms: 0 });
  } else if (mode === "insert") {
    // Baseline: the fastest plain insert of the same records we can write: one transaction, the
    // store's page cache, a plain (id, data) table with no index to keep.
    const [file, dbPath] = a as [string, string];
    const pages: { r: string; items: { id: string }[] }[] = [];
    for await (const line of createInterface({ input: createReadStream(file) })) if (line) pages.push(JSON.parse(line));
    const db = new BetterSqlite3(dbPath);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("cache_size = -32768");
    for (const r of WalkedResources) db.exec(`CREATE TABLE ${r} (id TEXT NOT NULL, data TEXT NOT NULL)`);
    const stmts = new Map(WalkedResources.map((r) => [r as string, db.prepare(`INSERT INTO ${r} (id, data) VALUES (?, ?)`)]));
    const t0 = performance.now();
    db.transaction(() => {
      for (const p of pages) {
        const s = stmts.get(p.r)!;
        for (const item of p.items) s.run(item.id, JSON.stringify(item));
      }
    })();
    const ms = performance.now() - t0;
    db.close();
    out({ ms, records: pages.reduce((n, p) => n + p.items.length, 0) });
  } else if (mode === "naive") {
    // Baseline: the naive sync a data engineer writes in an afternoon: the same walk, each item's
    // JSON upserted under its primary key, all in one transaction; no history, no diff, no view.
    const [base, key, from, to, dbPath] = a as [string, string, string, string, string];
    const c = client(base, key);
    const db = new BetterSqlite3(dbPath);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("cache_size = -32768");
    db.exec("CREATE TABLE items (resource TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (resource, id))");
    const upsert = db.prepare("INSERT OR REPLACE INTO items (resource, id, data) VALUES (?, ?, ?)");
    const t0 = performance.now();
    db.exec("BEGIN");
    const records = await walkOnly(c, WalkedResources, { from, to }, (r, items) => {
      for (const item of items as { id: string }[]) upsert.run(r, item.id, JSON.stringify(item));
    });
    db.exec("COMMIT");
    const ms = performance.now() - t0;
    db.close();
    await c.close();
    out({ ms, records, dbBytes: statSync(dbPath).size });
  } else if (mode === "sync") {
    const [base, key, from, to, dbPath, res] = a as [string, string, string, string, string, string?];
    // As the CLI runs it: the snapshot on its own thread.
    const c = client(base, key);
    openDatabase(dbPath).close();
    const store = await openWorkerSnapshot(dbPath, { piiKey: Buffer.from("bench-pii-key-0123456789") });
    const t0 = performance.now();
    const report = await sync({ source: c, store, claimsWindow: { from, to }, resources: resourcesArg(res), groupConcurrency: GROUP_CONCURRENCY });
    const ms = performance.now() - t0;
    await store.close();
    const db = openDatabase(dbPath);
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.close();
    await c.close();
    const totals = Object.values(report.resources).reduce(
      (t, r) => ({ inserted: t.inserted + (r?.inserted ?? 0), updated: t.updated + (r?.updated ?? 0), unchanged: t.unchanged + (r?.unchanged ?? 0) }),
      { inserted: 0, updated: 0, unchanged: 0 },
    );
    out({ ms, status: report.status, error: report.error?.message, ...totals, dbBytes: statSync(dbPath).size });
  } else if (mode === "store-floor") {
    out(storeFloor(a[0]!, a[1]!));
  } else if (mode === "encode-floor") {
    out(await encodeFloor(a[0]!));
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
