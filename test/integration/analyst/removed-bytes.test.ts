/**
 * What a command removes or replaces in the snapshot must not stay in its bytes (src/store/file/erasure.ts):
 * after `pii rekey`, `prune`, the SSN rule's scrub and a run's amendment of a version it wrote, the
 * raw bytes of the snapshot file, its -wal and its -shm hold none of what went (old-key tokens,
 * removed versions' JSON, plain SSNs, the amended text), read byte for byte, not through SQLite.
 * Another connection stays open on the file meanwhile, as a scheduler's or an analyst's would, so
 * the WAL and SHM stay on disk to be read. Each on a new file, and on a file written before the
 * rule (secure_delete off, no mark: the older copies its page splits left are in it).
 */
import { journalsWithOpenWrites } from "../../../src/eligibility/apply-journal.js";
import BetterSqlite3 from "better-sqlite3";
import { createHmac } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { beforeEach, describe, expect, it } from "vitest";
import { canonicalJson } from "../../../src/store/walk/canonical.js";
import { resolveSnapshotPiiKey } from "../../../src/store/pii/pii-key-identity.js";
import { prune } from "../../../src/store/retention/prune.js";
import { rekeySnapshot } from "../../../src/store/pii/rekey.js";
import { inProcessPort } from "../../../src/store/snapshot-port.js";
import { memorySource, type MemoryData } from "../../helpers/memory-source.js";
import { TEST_PII_KEY, syncStarted, useTempStores, type TempStore } from "../../helpers/temp-store.js";

const fresh = useTempStores();
let before = false;
/** A temp snapshot; written before the rule when `before` (as an older benefits-sync wrote it). */
function setup(): TempStore {
  const t = fresh();
  if (before) {
    t.db.pragma("secure_delete = OFF");
    t.db.prepare("DELETE FROM _meta WHERE key = 'erasure'").run();
  }
  return t;
}
const window = { from: "2026-01-01", to: "2026-03-31" };
const ONE = { resources: ["groups", "members"] as ("groups" | "members")[], groupConcurrency: 1 };
const MEMBERS = 300;
// Few distinct last4s: the rekey finds each token's digits by trying those that end in its last4.
const ssnOf = (i: number) => `${100 + (i % 800)}-${10 + (i % 89)}-${1000 + (i % 7)}`;

/** Members with SSNs and a note that names the run (a removed version's note is found nowhere else). */
function world(run: number, over: (i: number) => Record<string, unknown> = () => ({})): MemoryData {
  return {
    designs: [],
    groups: [{ id: "gp-G1", groupId: "G1", plans: [{ id: "p-G1", name: "A" }] }],
    members: Array.from({ length: MEMBERS }, (_, i) => ({
      id: `m${i}`,
      firstName: `First${i}`,
      ssn: ssnOf(i),
      note: `note-of-m${i}-in-run-${i % 3 === 0 ? run : 1}-${"x".repeat(40)}`,
      coverages: [{ id: `c-m${i}`, groupId: "G1", status: "active", startDate: "2026-01-01", endDate: null }],
      ...over(i),
    })),
    claims: [],
  };
}

async function synced(t: TempStore, data: () => MemoryData): Promise<number> {
  return (await syncStarted({ source: memorySource(data), store: inProcessPort(t.store), claimsWindow: window, ...ONE })).runId;
}

/** Which of `needles` the raw bytes of the file, its WAL and its SHM still hold, by file. */
function leftIn(path: string, needles: readonly string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const f of [path, `${path}-wal`, `${path}-shm`]) {
    if (!existsSync(f)) continue;
    const bytes = readFileSync(f);
    const found = needles.filter((n) => bytes.includes(n));
    if (found.length > 0) out[f.slice(path.length) || "file"] = found;
  }
  return out;
}

/** A connection that stays open on the snapshot (a scheduler, an analyst): the WAL and SHM stay. */
function observer(path: string): BetterSqlite3.Database {
  const db = new BetterSqlite3(path, { readonly: true });
  db.prepare("SELECT COUNT(*) FROM _runs").get();
  return db;
}

const token = (key: Buffer, digits: string) => createHmac("sha256", key).update(digits).digest("hex");

describe.each([
  ["a new file", false],
  ["a file written before the rule", true],
])("what a command removes or replaces is gone from the file, its WAL and its SHM (%s)", (_name, old) => {
  beforeEach(() => {
    before = old;
  });

  it("pii rekey: no token of the old key is left in the bytes", async () => {
    const t = setup();
    await synced(t, () => world(1));
    await synced(t, () => world(2, (i) => (i % 5 === 0 ? { firstName: `Renamed${i}` } : {})));
    resolveSnapshotPiiKey(t.path, TEST_PII_KEY.toString("utf8"));
    const oldTokens = [...new Set(Array.from({ length: MEMBERS }, (_, i) => token(TEST_PII_KEY, ssnOf(i).replace(/-/g, ""))))];
    expect(Object.values(leftIn(t.path, oldTokens)).flat().length).toBeGreaterThan(0);
    const watch = observer(t.path);
    try {
      const report = await rekeySnapshot({ unsettledWrites: journalsWithOpenWrites, dbPath: t.path, oldKey: TEST_PII_KEY, oldSource: "OLD", newKey: Buffer.from("removed-bytes-new-key-0123456789") });
      expect(report.versionsRewritten).toBeGreaterThanOrEqual(MEMBERS);
      expect(report).toMatchObject({ walEmptied: true, ...(old ? { rewrittenWhole: true } : {}) });
      expect(leftIn(t.path, oldTokens)).toEqual({});
    } finally {
      watch.close();
    }
  });

  it("prune: no removed version's JSON, nor its note, is left in the bytes", async () => {
    const t = setup();
    for (let run = 1; run <= 3; run++) await synced(t, () => world(run));
    const removed = t.db
      .prepare("SELECT d.data FROM _members_v v JOIN _members_d d ON d.vid = v.vid WHERE v.valid_to_run < 3 AND v.ended_by IS NOT NULL")
      .pluck()
      .all() as string[];
    // Run 3's changes need the versions it closed: those of runs 1 and 2 only go.
    expect(removed.length).toBe(MEMBERS / 3);
    const notes = removed.map((d) => (JSON.parse(d) as { note: string }).note);
    expect(Object.values(leftIn(t.path, notes)).flat().length).toBeGreaterThan(0);
    const watch = observer(t.path);
    try {
      const r = prune(t.db, { keepRuns: 1 });
      expect(Object.values(r.versionsRemoved).reduce((a, b) => a + b, 0)).toBe(removed.length);
      expect(r).toMatchObject({ walEmptied: true, vacuumed: old ? "full" : "incremental" });
      expect(leftIn(t.path, notes)).toEqual({});
      expect(leftIn(t.path, removed)).toEqual({});
    } finally {
      watch.close();
    }
  });

  it("the SSN rule's scrub: no plain SSN it masked is left in the bytes", async () => {
    const t = setup();
    await synced(t, () => world(1));
    // As an older rule stored them: a key it did not know, plain.
    const plain = Array.from({ length: 40 }, (_, i) => `${700 + i}-55-${2000 + i}`);
    t.db.transaction(() => {
      for (let i = 0; i < plain.length; i++) {
        const row = t.db.prepare("SELECT d.vid, d.data FROM _members_v v JOIN _members_d d ON d.vid = v.vid WHERE v.id = ?").get(`m${i}`) as { vid: number; data: string };
        t.db.prepare("UPDATE _members_d SET data = ? WHERE vid = ?").run(canonicalJson({ ...(JSON.parse(row.data) as object), spouseSsn: plain[i] }), row.vid);
      }
      t.db.prepare("DELETE FROM _meta WHERE key LIKE 'ssn%'").run();
    })();
    t.db.pragma("wal_checkpoint(TRUNCATE)");
    expect(Object.values(leftIn(t.path, plain)).flat().length).toBe(plain.length);
    const watch = observer(t.path);
    try {
      await synced(t, () => world(1));
      expect(leftIn(t.path, plain)).toEqual({});
    } finally {
      watch.close();
    }
  });
});
