/**
 * The key check every writer makes under the write lock (store/pii/key-guard.ts, issue 51): a store
 * that read its key before a `pii rekey` committed starts no run, and its mark says so too, with
 * nothing written. On a real SQLite file; the rekey's commit is what it changes for a writer: the
 * check value in `_meta`.
 */
import { describe, expect, it } from "vitest";
import { SnapshotBusyError } from "../../../src/errors.js";
import { SnapshotRekeyedError } from "../../../src/store/pii/key-guard.js";
import { defaultDeletePolicy } from "../../../src/store/snapshot.js";
import { piiKeyCheck, resolveSnapshotPiiKey, snapshotIdOf } from "../../../src/store/pii/pii-key-identity.js";
import { TEST_PII_KEY, useTempStores } from "../../helpers/temp-store.js";

const setup = useTempStores();

describe("a store whose snapshot was re-keyed after it read its key", () => {
  it("refuses its run at the claim and at its mark (exit 75's error), writing nothing; under the snapshot's key a run records that key", () => {
    const t = setup();
    expect(resolveSnapshotPiiKey(t.path, TEST_PII_KEY.toString("utf8")).outcome).toBe("first");
    const first = t.store.startRun("sync", {});
    t.store.finishRun(defaultDeletePolicy);
    const id = snapshotIdOf(t.db)!;
    expect(t.db.prepare("SELECT pii_key_check FROM _runs WHERE run_id = ?").pluck().get(first.runId)).toBe(piiKeyCheck(TEST_PII_KEY, id));

    // Another process's rekey commits: the snapshot now records another key's check.
    t.db.prepare("UPDATE _meta SET value = ? WHERE key = 'pii_key_check'").run(piiKeyCheck(Buffer.from("the-new-key-0123456789"), id));
    const runs = t.db.prepare("SELECT COUNT(*) FROM _runs").pluck().get();
    const claim = (() => {
      try {
        t.store.startRun("sync", {});
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(claim).toBeInstanceOf(SnapshotRekeyedError);
    expect(claim).toBeInstanceOf(SnapshotBusyError);
    expect((claim as Error).message).toMatch(/re-keyed \(pii rekey\) after this command read its PII key; nothing was written under the old key/);
    expect(() => t.store.runMark()).toThrow(SnapshotRekeyedError);
    expect(t.db.prepare("SELECT COUNT(*) FROM _runs").pluck().get()).toBe(runs);
    expect(t.db.inTransaction).toBe(false);
  });
});
