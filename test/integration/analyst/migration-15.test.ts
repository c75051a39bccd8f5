/**
 * Migration 15 (a claim's cents are plain columns written with the version; the claims' member
 * index carries paid and billed cents) on a snapshot made by the code before it:
 * test/fixtures/snapshot-schema14.db.gz was made by benefits-sync at commit 676c40c (schema 14) with
 * test/fixtures/make-old-snapshot.mjs, three runs of a 100-member sandbox (seed 5, 3 groups) with a
 * simulated day between them. Converted in place: every view keeps its columns and rows, every
 * cents value stands, the JSON is not touched, claims joined to members read no claim row, and the
 * next run goes on from it.
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ownQuestions } from "../../../bench/own-questions.js";
import { createClient } from "../../../src/api/client.js";
import { sync } from "../../../src/pipeline/sync.js";
import { startSandbox } from "../../../src/sandbox/index.js";
import { openDatabase } from "../../../src/store/file/database.js";
import { terminalProgress } from "../../../src/store/schema/migration-progress.js";
import { migrations } from "../../../src/store/schema/migrations.js";
import { cents } from "../../../src/store/schema/money-sql.js";
import { StoredResources } from "../../../src/store/schema/resources.js";
import { SnapshotStore } from "../../../src/store/snapshot.js";
import { guideQuestions } from "../../helpers/guide-questions.js";
import { answers, unpackSnapshot, views } from "../../helpers/old-snapshot.js";

const FIXTURE = new URL("../../fixtures/snapshot-schema14.db.gz", import.meta.url);
const dir = mkdtempSync(join(tmpdir(), "bsync-mig15-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const oldSnapshot = (name: string) => unpackSnapshot(FIXTURE, dir, name);
const withoutGroupParam = new Map([...ownQuestions].filter(([, sql]) => !sql.includes(":group_id")));
const questions = new Map([...guideQuestions(), ...withoutGroupParam]);
const AMOUNTS = ["claimAmount", "allowedAmount", "paidAmount"];
const centsOf = (db: BetterSqlite3.Database) => db.prepare(`SELECT vid, ${AMOUNTS.map((a) => `${a}_cents`).join(", ")} FROM _claims_v ORDER BY vid`).all();
/** Claim versions whose cents are not what the money rule makes of their JSON's amounts. */
const wrongCents = (db: BetterSqlite3.Database) =>
  db
    .prepare(
      `SELECT COUNT(*) FROM _claims_v v JOIN _claims_d d ON d.vid = v.vid WHERE ${AMOUNTS.map(
        (a) => `v.${a}_cents IS NOT ${cents(`json_extract(d.data, '$.${a}')`)}`,
      ).join(" OR ")}`,
    )
    .pluck()
    .get() as number;

describe("migration 15 on a snapshot made before it (schema 14)", () => {
  it("keeps every view, answer, cents value and JSON; claims joined to members read no claim row; the next run goes on", async () => {
    const path = oldSnapshot("old.db");
    const before = new BetterSqlite3(path, { readonly: true });
    expect(before.pragma("user_version", { simple: true })).toBe(14);
    expect(before.prepare("SELECT hidden FROM pragma_table_xinfo('_claims_v') WHERE name = 'paidAmount_cents'").pluck().get()).not.toBe(0);
    const json = StoredResources.map((r) => before.prepare(`SELECT vid, hash, data FROM _${r}_d ORDER BY vid`).all());
    const centsBefore = centsOf(before);
    const viewsBefore = views(before);
    const answersBefore = answers(before, questions);
    const triggersBefore = before.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger' ORDER BY name").pluck().all();
    before.close();
    expect(centsBefore.length).toBeGreaterThan(100);
    expect(centsBefore.some((c) => (c as { paidAmount_cents: number | null }).paidAmount_cents! > 0)).toBe(true);

    const db = openDatabase(path);
    try {
      expect(db.pragma("user_version", { simple: true })).toBe(migrations.length);
      for (const a of AMOUNTS) expect(db.prepare("SELECT hidden FROM pragma_table_xinfo('_claims_v') WHERE name = ?").pluck().get(`${a}_cents`), a).toBe(0);
      expect(centsOf(db)).toEqual(centsBefore);
      for (const [i, r] of StoredResources.entries()) expect(db.prepare(`SELECT vid, hash, data FROM _${r}_d ORDER BY vid`).all(), r).toEqual(json[i]);
      const after = views(db);
      expect([...after.keys()]).toEqual([...viewsBefore.keys()]);
      for (const [v, b] of viewsBefore) expect({ v, ...after.get(v)! }).toEqual({ v, ...b });
      expect(answers(db, questions)).toEqual(answersBefore);
      expect(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger' ORDER BY name").pluck().all()).toEqual(triggersBefore);
      // The question that read every claim's row at random (2.2 times a typed copy at 1M members).
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${ownQuestions.get("claims-by-member-state")}`).all() as { detail: string }[];
      expect(plan.map((p) => p.detail).join("\n")).toMatch(/COVERING INDEX _claims_v_ix_memberId/);
    } finally {
      db.close();
    }

    // The next run (a new simulated day on the sandbox the fixture was made from) writes its cents.
    const sb = await startSandbox({ members: 100, seed: 5, groups: 3 });
    const client = createClient({ baseUrl: sb.baseUrl, apiKey: sb.keys.full });
    const store = new SnapshotStore(openDatabase(path), { piiKey: Buffer.from("test-pii-key-0123456789abcdef") });
    try {
      for (let day = 0; day < 3; day++) await sb.advance();
      const r = await sync({ source: client, store, claimsWindow: { from: "1900-01-01", to: "2999-12-31" } });
      expect(r.status).toBe("succeeded");
      const written = store.db.prepare("SELECT COUNT(*) FROM _claims_v WHERE valid_from_run = ?").pluck().get(r.runId) as number;
      expect(written).toBeGreaterThan(0);
      expect(wrongCents(store.db)).toBe(0);
    } finally {
      store.db.close();
      await client.close();
      await sb.close();
    }
  });

  it("tells its progress on a terminal (the claims' versions, each index, the end)", () => {
    const written: string[] = [];
    openDatabase(oldSnapshot("tty.db"), { progress: terminalProgress({ isTTY: true, write: (s: string) => written.push(s) }) }).close();
    const text = written.join("");
    expect(text).toMatch(/upgrading the snapshot \(schema 15\), claims versions: [\d,]+ of [\d,]+ \(100%\)/);
    expect(text).toMatch(/\(schema 15\), index 1 of \d+/);
    expect(text).toMatch(/upgraded the snapshot in \d+ s\n$/);
  });
});
