/**
 * A `pii rekey` that commits after a census apply read the PII key (issue 51): the apply's journal
 * names people by SSN token, and its intents were written under the old key after the rekey, then
 * sent (the rekey had looked for open journal writes before its transaction, not under its lock).
 * Now each intent is written holding the snapshot's write lock under its key: the apply stops
 * before sending anything. In process, as `census apply` runs it: the sandbox over loopback, real
 * files, the real rekey.
 */
import { journalsWithOpenWrites } from "../../src/eligibility/apply-journal.js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/client.js";
import { ApplyJournal, readJournalEntries } from "../../src/eligibility/apply-journal.js";
import { applyCensus } from "../../src/eligibility/apply-census.js";
import { loadCensus } from "../../src/eligibility/census-input.js";
import { findServiceGroup } from "../../src/eligibility/service-group.js";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { openDatabase } from "../../src/store/file/database.js";
import { resolveSnapshotPiiKey } from "../../src/store/pii/pii-key-identity.js";
import { rekeySnapshot } from "../../src/store/pii/rekey.js";
import { SnapshotStore } from "../../src/store/snapshot.js";
import { ALL_CLAIMS } from "../helpers/sandbox-truth.js";
import { syncStarted } from "../helpers/temp-store.js";

const KEY_A = "census-rekey-key-A-0123456789";
const KEY_B = Buffer.from("census-rekey-key-B-9876543210");
const HEADER = "employee_id,relationship,first_name,last_name,date_of_birth,ssn,address_line1,city,plan_id,coverage_end";
let sb: Sandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ members: 30, groups: 1, seed: 51, enrollmentDelayMs: 5 });
  dir = mkdtempSync(join(tmpdir(), "bsync-census-rekey-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("a census apply whose snapshot is re-keyed after it read the key", () => {
  it("writes no intent under the old key and sends nothing; the apply says why", async () => {
    const db = join(dir, "snap.db");
    const client = createClient({ baseUrl: sb.baseUrl, apiKey: sb.keys.full });
    try {
      const key = resolveSnapshotPiiKey(db, KEY_A).key;
      const conn = openDatabase(db);
      await syncStarted({ source: client, store: new SnapshotStore(conn, { piiKey: key }), claimsWindow: ALL_CLAIMS });
      conn.close();
      const group = [...sb.iterate("groups")][0]!;
      const plan = group.plans[0]!.id;
      const file = join(dir, "census.csv");
      writeFileSync(file, `${HEADER}\nN1,self,Nadia,Hire,1991-03-04,900-10-0002,5 Elm St,Springfield,${plan},\n`);
      // As `census apply` starts: the key read, the census tokenised with it, the group found, the journal opened.
      const census = loadCensus(file, key);
      const found = await findServiceGroup(client, group.id);
      const journalPath = join(`${db}.census`, `${found.groupPolicyId}.journal.jsonl`);
      const journal = ApplyJournal.open(journalPath, { dbPath: db, key });
      const membersBefore = [...sb.iterate("members")].length;
      // The rekey commits now: no journal write is open yet.
      await rekeySnapshot({ unsettledWrites: journalsWithOpenWrites, dbPath: db, oldKey: key, oldSource: KEY_A, newKey: KEY_B });
      let report;
      try {
        report = await applyCensus(client, found, census, key, journal, { batchSize: 50, settleMs: 50, pollTimeoutMs: 5_000, sleep: (ms) => new Promise((r) => setTimeout(r, ms)), log: () => {} });
      } finally {
        journal.close();
      }
      expect(readJournalEntries(journalPath).filter((e) => e.t === "intent"), "intents written under the old key").toEqual([]);
      expect([...sb.iterate("members")].length, "members the apply added").toBe(membersBefore);
      expect(report.requests).toEqual([]);
      expect(report.status).toBe("failed");
      expect(report.stoppedBy).toMatch(/re-keyed \(pii rekey\)/);
    } finally {
      await client.close();
    }
  });
});
