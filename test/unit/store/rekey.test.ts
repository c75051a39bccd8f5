/**
 * `pii rekey` re-tokenises a snapshot in place: the digits behind each token are found under the
 * old key (nine digits, and fewer), every token of every version (history too) is written under
 * the new key with the version's hash and columns, and nothing is recorded as a change. Real
 * SQLite files, syncs from an in-memory service; tokens recomputed here with node:crypto.
 */
import { createHmac } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { SnapshotBusyError } from "../../../src/errors.js";
import { hash } from "node:crypto";
import { readPiiKeyCheck, piiKeyCheck, resolveSnapshotPiiKey } from "../../../src/store/pii/pii-key-identity.js";
import { journalsWithOpenWrites } from "../../../src/eligibility/apply-journal.js";
import { RekeyRefusedError, rekeySnapshot } from "../../../src/store/pii/rekey.js";
import { SnapshotStore } from "../../../src/store/snapshot.js";
import { inProcessPort } from "../../../src/store/snapshot-port.js";
import { memorySource, type MemoryData } from "../../helpers/memory-source.js";
import { runCli } from "../../unit/cli/run-cli.js";
import { TEST_PII_KEY, syncStarted, useTempStores, type TempStore } from "../../helpers/temp-store.js";

const setup = useTempStores();
const window = { from: "2026-01-01", to: "2026-03-31" };
const ONE = { resources: ["groups", "members"] as ("groups" | "members")[], groupConcurrency: 1 };
const NEW_KEY = Buffer.from("unit-rekey-new-key-0123456789");
const hmac = (key: Buffer, digits: string) => createHmac("sha256", key).update(digits).digest("hex");

/**
 * The service's people: an SSN of nine digits, one of seven, one of two; an `[ssn:…]` in text as
 * the shape rule stores a dashed SSN in free text (written here under `textKey`, as that rule would).
 */
function world(firstName = "Ana", extra: Record<string, unknown> = {}, textKey = TEST_PII_KEY): MemoryData {
  const cov = (id: string) => [{ id: `c-${id}`, groupId: "G1", status: "active", startDate: "2026-01-01", endDate: null }];
  return {
    designs: [],
    groups: [{ id: "gp-G1", groupId: "G1", plans: [{ id: "p-G1", name: "A" }] }],
    members: [
      { id: "m1", firstName, ssn: "123-45-6789", notes: `re [ssn:${hmac(textKey, "123456789")}]`, coverages: cov("m1"), ...extra },
      { id: "m2", firstName: "Bo", ssn: "555-1234", dependents: [{ name: "Kim", ssn: "987-65-4321" }], coverages: cov("m2") },
      { id: "m3", firstName: "Cy", ssn: "12", coverages: cov("m3") },
    ],
    claims: [],
  };
}

async function synced(t: TempStore, data: () => MemoryData, key = TEST_PII_KEY): Promise<void> {
  const store = key === TEST_PII_KEY ? t.store : new SnapshotStore(t.db, { piiKey: key, commitEveryPages: 2 });
  await syncStarted({ source: memorySource(data), store: inProcessPort(store), claimsWindow: window, ...ONE });
}

/** Two runs (m1 renamed in the second: a history version), and the snapshot's key check recorded. */
async function snapshot(t: TempStore, extra: Record<string, unknown> = {}): Promise<void> {
  await synced(t, () => world("Ana", extra));
  await synced(t, () => world("Anna", extra));
  resolveSnapshotPiiKey(t.path, TEST_PII_KEY.toString("utf8"));
}

const versions = (t: TempStore) => t.db.prepare("SELECT v.vid, v.id, v.valid_to_run, d.hash, d.data, v.ssn_token, v.ssn_last4, v.fp FROM _members_v v JOIN _members_d d ON d.vid = v.vid ORDER BY v.vid").all() as {
  vid: number;
  id: string;
  valid_to_run: number | null;
  hash: string;
  data: string;
  ssn_token: string | null;
  ssn_last4: string | null;
  fp: number | null;
}[];
const state = (t: TempStore) => ({
  versions: versions(t).map((v) => [v.vid, v.hash, v.data]),
  changes: t.db.prepare("SELECT COUNT(*) FROM changes").pluck().get(),
  check: readPiiKeyCheck(t.db),
});

describe("rekeySnapshot", () => {
  it("rewrites every token, current and history, recovering 9, 7 and 2 digits; hash and columns follow; no change recorded", async () => {
    const t = setup();
    await snapshot(t);
    const before = versions(t);
    expect(before.filter((v) => v.id === "m1")).toHaveLength(2);
    const changes = t.db.prepare("SELECT COUNT(*) FROM changes").pluck().get();
    const report = await rekeySnapshot({ unsettledWrites: journalsWithOpenWrites, dbPath: t.path, oldKey: TEST_PII_KEY, oldSource: "OLD", newKey: NEW_KEY });
    expect(report).toMatchObject({ recovered: 4, unrecoverable: 0, versionsRewritten: 4, dryRun: false });
    const after = versions(t);
    expect(after.map((v) => [v.vid, v.id, v.valid_to_run])).toEqual(before.map((v) => [v.vid, v.id, v.valid_to_run]));
    const digits: Record<string, string> = { m1: "123456789", m2: "5551234", m3: "12" };
    for (const v of after) {
      const data = JSON.parse(v.data) as Record<string, unknown>;
      expect(data.ssn_token).toBe(hmac(NEW_KEY, digits[v.id]!));
      expect(v.ssn_token).toBe(data.ssn_token);
      expect(v.hash).toBe(hash("sha256", v.data, "hex").slice(0, 32));
      expect(v.fp).toBeNull();
      if (v.id === "m1") expect(data.notes).toBe(`re [ssn:${hmac(NEW_KEY, "123456789")}]`);
      if (v.id === "m2") expect((data.dependents as { ssn_token: string }[])[0]!.ssn_token).toBe(hmac(NEW_KEY, "987654321"));
      expect(v.data).not.toContain(hmac(TEST_PII_KEY, digits[v.id]!));
    }
    expect(t.db.prepare("SELECT COUNT(*) FROM changes").pluck().get()).toBe(changes);
    expect(t.db.prepare("SELECT COUNT(*) FROM _pages").pluck().get()).toBe(0);
    const id = t.db.prepare("SELECT value FROM _meta WHERE key = 'snapshot_id'").pluck().get() as string;
    expect(readPiiKeyCheck(t.db)).toBe(piiKeyCheck(NEW_KEY, id));

    // The next sync under the new key: the same records, nothing updated.
    await synced(t, () => world("Anna", {}, NEW_KEY), NEW_KEY);
    expect(t.db.prepare("SELECT SUM(updated) FROM _run_counts WHERE run_id = (SELECT MAX(run_id) FROM _runs)").pluck().get()).toBe(0);
  });

  it("refuses tokens whose digits it cannot find, naming the count and the flag; with the flag they become null", async () => {
    const t = setup();
    // A token in text that no key field shares, and a pair whose digits are more than nine.
    await snapshot(t, { memo: `[ssn:${hmac(TEST_PII_KEY, "111223333")}]`, spouseSsn: "123-45-678-901" });
    const before = state(t);
    const refused = rekeySnapshot({ unsettledWrites: journalsWithOpenWrites, dbPath: t.path, oldKey: TEST_PII_KEY, oldSource: "OLD", newKey: NEW_KEY });
    await expect(refused).rejects.toThrow(RekeyRefusedError);
    await expect(refused).rejects.toThrow(/the digits of 2 tokens were not found .*--exhaustive.*--drop-unrecoverable sets them to null/);
    expect(state(t)).toEqual(before);

    const report = await rekeySnapshot({ unsettledWrites: journalsWithOpenWrites, dbPath: t.path, oldKey: TEST_PII_KEY, oldSource: "OLD", newKey: NEW_KEY, dropUnrecoverable: true });
    expect(report.unrecoverable).toBe(2);
    const m1 = JSON.parse(versions(t).filter((v) => v.id === "m1").at(-1)!.data) as Record<string, unknown>;
    expect([m1.memo, m1.spouseSsn_token, m1.spouseSsn_last4, m1.ssn_token]).toEqual(["[ssn]", null, "8901", hmac(NEW_KEY, "123456789")]);
  });

  it("refuses while a census journal beside the snapshot has open writes", async () => {
    const t = setup();
    await snapshot(t);
    mkdirSync(`${t.path}.census`);
    const intent = { t: "intent", id: "w1", kind: "add-subscriber", lines: [2], tokens: [hmac(TEST_PII_KEY, "123456789")], at: "2026-01-02T00:00:00Z" };
    writeFileSync(`${t.path}.census/gp-G1.journal.jsonl`, `${JSON.stringify(intent)}\n`);
    const before = state(t);
    await expect(rekeySnapshot({ unsettledWrites: journalsWithOpenWrites, dbPath: t.path, oldKey: TEST_PII_KEY, oldSource: "OLD", newKey: NEW_KEY })).rejects.toThrow(
      /gp-G1\.journal\.jsonl holds 1 census write with no settled outcome.*census apply/,
    );
    expect(state(t)).toEqual(before);
  });

  it("a live run holding the snapshot: SnapshotBusyError, and the CLI exits 75 having changed nothing", async () => {
    const t = setup();
    await snapshot(t);
    t.db
      .prepare("INSERT INTO _runs (job, status, started_at, options, pid, host, lease_until) VALUES ('sync', 'running', ?, '{}', ?, ?, ?)")
      .run(new Date().toISOString(), process.pid, hostname(), new Date(Date.now() + 60_000).toISOString());
    const before = state(t);
    await expect(rekeySnapshot({ unsettledWrites: journalsWithOpenWrites, dbPath: t.path, oldKey: TEST_PII_KEY, oldSource: "OLD", newKey: NEW_KEY })).rejects.toThrow(SnapshotBusyError);
    const cli = await runCli(["pii", "rekey", "--old-key-env", "OLD_KEY", "--db", t.path], { env: { OLD_KEY: TEST_PII_KEY.toString("utf8"), BENEFITS_PII_KEY: NEW_KEY.toString("utf8") } });
    expect(cli.code, cli.stderr).toBe(75);
    expect(cli.stderr).toMatch(/holds this snapshot/);
    expect(state(t)).toEqual(before);
  });

  it("a crash between the commit and the key file's rename: the next open finishes it, with the key the snapshot records", async () => {
    const t = setup();
    await synced(t, () => world());
    resolveSnapshotPiiKey(t.path, TEST_PII_KEY.toString("utf8"));
    // A new key file left by a rekey that never committed: not the snapshot's, so a run leaves it and rekey replaces it.
    const leftover = "ab".repeat(32);
    writeFileSync(`${t.path}.pii-key.new`, `${leftover}\n`, { mode: 0o600 });
    expect(resolveSnapshotPiiKey(t.path, TEST_PII_KEY.toString("utf8")).outcome).toBe("same");
    expect(readFileSync(`${t.path}.pii-key.new`, "utf8").trim()).toBe(leftover);

    const crash = new Error("killed between commit and rename");
    const afterCommit = () => {
      throw crash;
    };
    await expect(rekeySnapshot({ unsettledWrites: journalsWithOpenWrites, dbPath: t.path, oldKey: TEST_PII_KEY, oldSource: "OLD", newKey: undefined, afterCommit })).rejects.toBe(crash);
    const pending = readFileSync(`${t.path}.pii-key.new`, "utf8").trim();
    expect(pending).not.toBe(leftover);
    expect(existsSync(`${t.path}.pii-key`)).toBe(false);
    const id = t.db.prepare("SELECT value FROM _meta WHERE key = 'snapshot_id'").pluck().get() as string;
    expect(readPiiKeyCheck(t.db)).toBe(piiKeyCheck(Buffer.from(pending, "hex"), id));

    const next = resolveSnapshotPiiKey(t.path, undefined);
    expect([next.key.toString("hex"), next.outcome, next.created]).toEqual([pending, "same", false]);
    expect(readFileSync(`${t.path}.pii-key`, "utf8").trim()).toBe(pending);
    expect(existsSync(`${t.path}.pii-key.new`)).toBe(false);
    const m1 = JSON.parse(versions(t).find((v) => v.id === "m1")!.data) as Record<string, unknown>;
    expect(m1.ssn_token).toBe(hmac(Buffer.from(pending, "hex"), "123456789"));
  });
});
