/**
 * The settings under which the store sorts a whole table at once: an index built after a first
 * load, a count kept by the store (rollups.ts) counted from scratch.
 */
import { availableParallelism } from "node:os";
import type { Database } from "better-sqlite3";

/**
 * A snapshot connection's page cache: 32 MB, so that the current-version index of a 100k-member
 * snapshot fits. Measured with the benchmark's first sync: 64 MB was 5% faster and cost 35 MB more
 * peak memory, which the 300 MB bar cannot spare.
 */
export const StoreCacheSize = -32768;

/**
 * The page cache while a run loads resources from empty (a chain's first run, see
 * `deferIndexes`): 8 MB. Such a load appends rows and looks up nothing it wrote (its indexes are
 * built when it ends), so the larger cache only held memory: the CLI's first sync at a million
 * members peaked at 312 to 316 MB with 32 MB, 289 MB with 8 MB (148 s against 157 to 235 s).
 */
export const LoadCacheSize = -8192;

/**
 * The page cache while a build runs: 4 MB. SQLite sorts in memory up to the cache's size before
 * it merges runs from disk, and the sort's memory comes on top of the cache's. Measured on copies
 * of first loads of 100,000 and 400,000 members: with a 4 MB cache the index builds took 17 to 32 %
 * less time than with the store's 32 MB, and peaked 50 to 75 MB lower; the claim lines' totals by
 * code at 100,000 members took 0.71 s against 0.98 s.
 */
const BuildCacheSize = -4096;

/**
 * Helper threads SQLite's sorter may start (`PRAGMA threads`): 2 where the machine has cores to
 * spare. The walk that loaded the rows is over when a build runs, so its cores are idle. Measured
 * on 2 cores, one index of 3.3M claims at 1M members (warm): 2.39 to 2.61 s with none, 1.93 to
 * 2.02 s with 1, 1.67 to 1.89 s with 2, 1.93 to 2.03 s with 4, at the same peak memory.
 */
const SortThreads = availableParallelism() > 1 ? 2 : 0;

/** Run `build` under the build settings, then put the connection's own back. */
export function withBuildSettings<T>(db: Database, build: () => T): T {
  const cache = db.pragma("cache_size", { simple: true }) as number;
  const threads = db.pragma("threads", { simple: true }) as number;
  db.pragma(`cache_size = ${BuildCacheSize}`);
  db.pragma(`threads = ${SortThreads}`);
  try {
    return build();
  } finally {
    db.pragma(`cache_size = ${cache}`);
    db.pragma(`threads = ${threads}`);
  }
}
