/**
 * The counts the store keeps (src/store/schema/rollups.ts) under every kind of write its triggers must
 * follow, written straight to the version tables of a real snapshot file: inserts, closes,
 * reopens, amends that move a coverage to another member or group or change a claim's lines,
 * removals, and statements that change many rows at once. A seeded random walk of such writes,
 * each followed by a comparison with the groupings the counts stand for, computed here in
 * TypeScript from the rows alone.
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { refreshTypedSql } from "../../../src/store/schema/analyst-schema.js";
import { openDatabase } from "../../../src/store/file/database.js";
import { deferRollups, ensureRollups } from "../../../src/store/schema/rollups.js";
import { writeVersionRow } from "../../helpers/hand-run.js";
import { centsOf } from "../../helpers/typed-copy.js";

const dir = mkdtempSync(join(tmpdir(), "bsync-rollups-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A small deterministic generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Row = Record<string, unknown>;

/** Writes a current version of `res` as the store does (its row, then its JSON beside), run 1. */
const writer = (db: BetterSqlite3.Database, res: "claims" | "coverages") => (id: string, data: string) => writeVersionRow(db, res, { id, data });
const sorted = (rows: unknown[][]) => rows.map((r) => JSON.stringify(r)).sort();

/** The groupings the counts stand for, from the version rows alone. */
function expected(db: BetterSqlite3.Database) {
  const coverages = db.prepare("SELECT memberId, groupId, status FROM _coverages_v WHERE valid_to_run IS NULL").all() as Row[];
  const pairs = new Map<string, { g: unknown; active: boolean }>();
  // Each member's groups, a null group counting as one (the rows of `memberships`).
  const groupsOf = new Map<unknown, Set<unknown>>();
  for (const c of coverages) {
    if (c.memberId !== null) groupsOf.set(c.memberId, (groupsOf.get(c.memberId) ?? new Set()).add(c.groupId));
    if (c.groupId === null) continue;
    const k = JSON.stringify([c.memberId, c.groupId]);
    const p = pairs.get(k) ?? { g: c.groupId, active: false };
    p.active ||= c.status === "active";
    pairs.set(k, p);
  }
  const groups = new Map<unknown, [number, number]>();
  for (const p of pairs.values()) {
    const [n, a] = groups.get(p.g) ?? [0, 0];
    groups.set(p.g, [n + 1, a + (p.active ? 1 : 0)]);
  }
  const claims = db.prepare("SELECT v.id, v.memberId, d.data FROM _claims_v v JOIN _claims_d d ON d.vid = v.vid WHERE v.valid_to_run IS NULL").all() as Row[];
  const members = new Map<unknown, number>();
  const codes = new Map<string, { code: unknown; lines: number; claims: Set<unknown>; cents: number | null }>();
  for (const c of claims) {
    if (c.memberId !== null) members.set(c.memberId, (members.get(c.memberId) ?? 0) + 1);
    for (const l of ((JSON.parse(c.data as string) as Row).lines as Row[] | null | undefined) ?? []) {
      const code = l.code ?? null;
      const t = codes.get(JSON.stringify(code)) ?? { code, lines: 0, claims: new Set(), cents: null };
      t.lines++;
      t.claims.add(c.id);
      const cents = centsOf(l.amount);
      if (cents !== null) t.cents = (t.cents ?? 0) + cents;
      codes.set(JSON.stringify(code), t);
    }
  }
  return {
    groups: sorted([...groups].map(([g, [n, a]]) => [g, n, a])),
    several: sorted([...groupsOf].filter(([, gs]) => gs.size > 1).map(([m, gs]) => [m, gs.size])),
    members: sorted([...members]),
    codes: sorted([...codes.values()].map((t) => [t.code, t.lines, t.claims.size, t.cents])),
  };
}

function kept(db: BetterSqlite3.Database) {
  return {
    groups: sorted(db.prepare("SELECT groupId, members, active_members FROM group_member_counts").raw().all() as unknown[][]),
    several: sorted(db.prepare("SELECT memberId, groups FROM members_in_several_groups").raw().all() as unknown[][]),
    members: sorted(db.prepare("SELECT memberId, claims FROM member_claim_counts").raw().all() as unknown[][]),
    codes: sorted(db.prepare("SELECT code, lines, claims, amount_cents FROM procedure_totals").raw().all() as unknown[][]),
  };
}

const MEMBERS = ["m1", "m2", "m3", "m4", "m5"];
const GROUPS = ["g1", "g2", "g3", null];
const STATUSES = ["active", "terminated", "pending", null];
const CODES = ["99213", "99214", "80053", null];
const AMOUNTS = ["12.50", "100", "-3.07", "1,234.50", 7.5, null, "0.01"];

describe("the store's counts follow every write to the version tables", () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`seed ${seed}: 400 random writes, the counts equal the groupings after each`, () => {
      const r = rng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
      const db = openDatabase(join(dir, `walk-${seed}.db`));
      try {
        db.exec("INSERT INTO _runs (run_id, job, status, started_at, options) VALUES (1, 'sync', 'succeeded', '2026-01-01T00:00:00Z', '{}')");
        const insert = { coverages: writer(db, "coverages"), claims: writer(db, "claims") };
        const refresh = { coverages: db.prepare(refreshTypedSql("coverages")), claims: db.prepare(refreshTypedSql("claims")) };
        const coverage = (id: string) => JSON.stringify({ id, memberId: pick(MEMBERS), groupId: pick(GROUPS), status: pick(STATUSES), startDate: "2026-01-01" });
        const claim = (id: string) => {
          const lines = Array.from({ length: Math.floor(r() * 4) }, () => ({ code: pick(CODES), amount: pick(AMOUNTS) }));
          return JSON.stringify({ id, memberId: r() < 0.1 ? null : pick(MEMBERS), groupId: "g1", ...(r() < 0.1 ? {} : { lines }) });
        };
        const ops: string[] = [];
        const kinds = new Set<string>();
        let severalSeen = 0;
        for (let step = 0; step < 400; step++) {
          const res = r() < 0.5 ? "coverages" : "claims";
          const make = res === "coverages" ? coverage : claim;
          const vids = db.prepare(`SELECT vid FROM _${res}_v`).pluck().all() as number[];
          const x = r();
          const t = `_${res}_v`;
          let op: string;
          if (vids.length < 5 || x < 0.3) {
            // An insert, or an update: the current version closed, a new one written.
            const id = `${res}-${Math.floor(r() * 12)}`;
            db.prepare(`UPDATE ${t} SET valid_to_run = 2, ended_by = 'update' WHERE id = ? AND valid_to_run IS NULL`).run(id);
            insert[res](id, make(id));
            op = "insert";
          } else if (x < 0.45) {
            db.prepare(`UPDATE ${t} SET valid_to_run = 2, ended_by = 'update' WHERE vid = ?`).run(pick(vids));
            op = "close";
          } else if (x < 0.55) {
            // A version put back (a rollback): only where its record has no current one.
            const closed = db.prepare(`SELECT vid FROM ${t} v WHERE valid_to_run IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${t} c WHERE c.id = v.id AND c.valid_to_run IS NULL)`).pluck().all() as number[];
            if (closed.length > 0) db.prepare(`UPDATE ${t} SET valid_to_run = NULL, ended_by = NULL WHERE vid = ?`).run(pick(closed));
            op = "reopen";
          } else if (x < 0.75) {
            // An amend: the JSON first, then its typed columns, as page-apply.ts does.
            const vid = pick(vids);
            const id = db.prepare(`SELECT id FROM ${t} WHERE vid = ?`).pluck().get(vid) as string;
            db.prepare(`UPDATE _${res}_d SET data = ? WHERE vid = ?`).run(make(id), vid);
            refresh[res].run(vid);
            op = "amend";
          } else if (x < 0.85) {
            db.prepare(`DELETE FROM ${t} WHERE vid = ?`).run(pick(vids));
            op = "delete";
          } else if (x < 0.9) {
            // Many rows in one statement (a scope's deletes, a failed run's revert).
            db.prepare(`UPDATE ${t} SET valid_to_run = 3, ended_by = 'delete' WHERE valid_to_run IS NULL AND vid % 3 = ?`).run(Math.floor(r() * 3));
            op = "close many";
          } else if (x < 0.95) {
            db.prepare(
              `UPDATE ${t} SET valid_to_run = NULL, ended_by = NULL WHERE vid % 2 = ? AND vid IN (SELECT MAX(vid) FROM ${t} GROUP BY id HAVING COUNT(valid_to_run) = COUNT(*))`,
            ).run(Math.floor(r() * 2));
            op = "reopen many";
          } else {
            db.prepare(`DELETE FROM ${t} WHERE vid % 5 = ?`).run(Math.floor(r() * 5));
            op = "delete many";
          }
          ops.push(`${res} ${op}`);
          kinds.add(op);
          const now = kept(db);
          expect({ step, ops: ops.slice(-3), ...now }).toEqual({ step, ops: ops.slice(-3), ...expected(db) });
          severalSeen = Math.max(severalSeen, now.several.length);
        }
        // Counted again from scratch (as after a load), the same counts.
        deferRollups(db, ["claims", "coverages"]);
        ensureRollups(db);
        expect(kept(db)).toEqual(expected(db));
        // Something to count at the end, and every kind of write was made.
        const end = expected(db);
        expect(end.groups.length + end.members.length + end.codes.length).toBeGreaterThan(0);
        // Members in several groups came and went along the way (5 members, 4 groups).
        expect(severalSeen).toBeGreaterThan(1);
        expect([...kinds].sort()).toEqual(["amend", "close", "close many", "delete", "delete many", "insert", "reopen", "reopen many"]);
      } finally {
        db.close();
      }
    });
  }

  it("counted again from scratch when its triggers were dropped for a load, and followed again after", () => {
    const db = openDatabase(join(dir, "deferred.db"));
    try {
      db.exec("INSERT INTO _runs (run_id, job, status, started_at, options) VALUES (1, 'sync', 'succeeded', '2026-01-01T00:00:00Z', '{}')");
      const ins = writer(db, "claims");
      const cov = writer(db, "coverages");
      const names = [
        ...["groups", "several", "members"].flatMap((k) => ["insert", "update", "delete"].map((w) => `_${k === "members" ? "claims" : "coverages"}_v_${k}_${w}`)),
        ...["_claims_d_procedures_insert", "_claims_d_procedures_amend", "_claims_v_procedures_update", "_claims_v_procedures_delete"],
      ];
      const triggers = () => db.prepare(`SELECT COUNT(*) FROM sqlite_schema WHERE type = 'trigger' AND name IN (${names.map(() => "?").join(", ")})`).pluck().get(...names);
      // Every one of them was there before the load.
      expect(triggers()).toBe(names.length);
      deferRollups(db, ["claims", "coverages"]);
      expect(triggers()).toBe(0);
      for (let i = 0; i < 20; i++) {
        ins(`c${i}`, JSON.stringify({ id: `c${i}`, memberId: `m${i % 3}`, lines: [{ code: `P${i % 2}`, amount: "1.10" }] }));
        cov(`v${i}`, JSON.stringify({ id: `v${i}`, memberId: `m${i % 4}`, groupId: `g${i % 2}`, status: "active" }));
      }
      // Nothing followed the load: the counts are behind until they are made again.
      expect(kept(db)).not.toEqual(expected(db));
      ensureRollups(db);
      expect(kept(db)).toEqual(expected(db));
      ins("c99", JSON.stringify({ id: "c99", memberId: "m0", lines: [{ code: "P1", amount: "2.00" }] }));
      expect(kept(db)).toEqual(expected(db));
      expect(kept(db).codes).toContain(JSON.stringify(["P1", 11, 11, 1300]));
    } finally {
      db.close();
    }
  });
});
