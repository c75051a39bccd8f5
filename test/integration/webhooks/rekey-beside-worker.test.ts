/**
 * A `pii rekey` while the webhook worker refetches (issue 51). The worker reads the PII key when
 * it opens the snapshot and refetches outside the lease; a rekey records no run, so the worker's
 * run-id check could not see one that committed meanwhile, and it wrote the refetched members
 * under the old key: false `ssn_token` changes, delivered to every sink. The fetch is made to
 * straddle the rekey by an event, not a sleep: the first refetch runs the whole rekey before the
 * service answers it. Real SQLite files, the sandbox over loopback, the real rekey.
 */
import { journalsWithOpenWrites } from "../../../src/eligibility/apply-journal.js";
import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/client.js";
import { openDatabase } from "../../../src/store/file/database.js";
import { resolveSnapshotPiiKey } from "../../../src/store/pii/pii-key-identity.js";
import { ssnToken } from "../../../src/store/pii/pii.js";
import { rekeySnapshot } from "../../../src/store/pii/rekey.js";
import { SnapshotStore } from "../../../src/store/snapshot.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { Inbox, inboxPathFor } from "../../../src/webhooks/inbox.js";
import { drainInbox } from "../../../src/webhooks/apply.js";
import { ALL_CLAIMS } from "../../helpers/sandbox-truth.js";
import { syncStarted, TEST_PII_KEY, tempStore } from "../../helpers/temp-store.js";

const NEW_KEY = Buffer.from("rekey-beside-worker-new-key-0123456789");
let cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

const digitsOf = (sb: Sandbox) => new Map([...sb.iterate("members")].map((m) => [m.id, m.ssn.replace(/\D/g, "")]));

/** Every member version's `ssn_token`, with its member and run. */
function tokens(db: ReturnType<typeof openDatabase>): { id: string; run: number; token: string | null }[] {
  return db
    .prepare("SELECT v.id, v.valid_from_run AS run, json_extract(d.data, '$.ssn_token') AS token FROM _members_v v JOIN _members_d d ON d.vid = v.vid ORDER BY v.vid")
    .all() as { id: string; run: number; token: string | null }[];
}

describe("a pii rekey that commits while the webhook worker refetches", () => {
  it("the worker writes nothing under the old key: its events stay pending, and the next drain (the new key) applies them with no ssn_token change", async () => {
    const sb = await startSandbox({ members: 40, seed: 51, groups: 2 });
    const client = createClient({ baseUrl: sb.baseUrl, apiKey: sb.keys.full, retry: { maxAttempts: 3, baseMs: 2, capMs: 20, retryAfterCapMs: 100 } });
    const t = tempStore();
    const inbox = Inbox.open(inboxPathFor(t.path));
    cleanups.push(() => sb.close(), () => client.close(), () => t.cleanup(), () => inbox.close());
    // As a command records it: the snapshot's check value is the old key's.
    expect(resolveSnapshotPiiKey(t.path, TEST_PII_KEY.toString("utf8")).outcome).toBe("first");
    await syncStarted({ source: client, store: t.store, claimsWindow: ALL_CLAIMS });
    const before = digitsOf(sb);
    await sb.advance();
    const after = digitsOf(sb);
    const ids = [...after.keys()].slice(0, 20);
    let seq = 0;
    inbox.accept(ids.map((memberId) => ({ id: `evt_${++seq}`, type: "member_update", memberId, receivedAt: new Date().toISOString() })));

    let rekeyed = false;
    const straddling = {
      memberText: async (id: string, o?: { signal?: AbortSignal | undefined }) => {
        if (!rekeyed) {
          rekeyed = true;
          await rekeySnapshot({ unsettledWrites: journalsWithOpenWrites, dbPath: t.path, oldKey: TEST_PII_KEY, oldSource: "the test's old key", newKey: NEW_KEY });
        }
        return client.memberText(id, o);
      },
    };
    const first = await drainInbox({ inbox, source: straddling, store: t.store });
    expect(rekeyed).toBe(true);

    // What the worker does next: a drain on the snapshot opened again, under the key it now records.
    const reopened = openDatabase(t.path);
    cleanups.push(() => void reopened.close());
    const second = await drainInbox({ inbox, source: client, store: new SnapshotStore(reopened, { piiKey: NEW_KEY }) });
    expect(first.applied + second.applied).toBe(ids.length);
    expect(inbox.status()).toMatchObject({ pending: 0, parked: [] });

    // No version under the old key: each token is the new key's of the member's SSN, before the day or after it.
    const newTokens = new Set([...before.values(), ...after.values()].map((d) => ssnToken(d, NEW_KEY)));
    const stale = tokens(reopened).filter((v) => v.token !== null && !newTokens.has(v.token));
    expect(stale, "versions whose ssn_token is not the snapshot key's").toEqual([]);
    // No false ssn_token change: one is recorded only for a member whose SSN the day changed.
    const ssnChanged = new Set([...after].filter(([id, d]) => before.has(id) && before.get(id) !== d).map(([id]) => id));
    const tokenChanges = reopened.prepare("SELECT id, run_id FROM field_changes WHERE resource = 'members' AND field = 'ssn_token'").all() as { id: string }[];
    expect(tokenChanges.filter((c) => !ssnChanged.has(c.id))).toEqual([]);
    // The worker's first drain stopped at the rekey and wrote nothing.
    expect(first.applied).toBe(0);
    expect(first.busy?.message).toMatch(/re-keyed \(pii rekey\)/);
  });
});
