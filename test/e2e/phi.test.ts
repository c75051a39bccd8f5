import BetterSqlite3 from "better-sqlite3";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/client.js";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { ALL_CLAIMS, sandboxData } from "../helpers/sandbox-truth.js";
import { EVENT_DEADLINE_MS } from "../helpers/wait.js";

/**
 * Canary SSNs (every SSN the sandbox serves, plus one enrolled through the API) and the API key
 * must appear nowhere: not in the database bytes (-wal and -shm too), not in what the CLI prints,
 * not in the delta files, not in quarantined excerpts.
 */
let sb: Sandbox;
let dir: string;
const CANARY = "987-65-4320";

beforeAll(async () => {
  sb = await startSandbox({ members: 300, groups: 2, seed: 9, enrollmentDelayMs: 20 });
  dir = mkdtempSync(join(tmpdir(), "bsync-phi-"));
});
afterAll(async () => {
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

function filesUnder(d: string): string[] {
  return readdirSync(d, { recursive: true, encoding: "utf8" })
    .map((f) => join(d, f))
    .filter((f) => statSync(f).isFile());
}

describe("PHI and keys never reach the snapshot, the outputs or the logs", () => {
  it("holds across a sync with retries and quarantine, a day of changes and a second sync with deltas", async () => {
    const db = join(dir, "snap.db");
    const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db };
    const args = ["sync", "--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to, "--out", join(dir, "deltas")];

    const ssns = new Set<string>();
    const collectSsns = () => {
      for (const m of sandboxData(sb).members) if (/^\d{3}-\d{2}-\d{4}$/.test(String(m.ssn))) ssns.add(String(m.ssn));
    };
    collectSsns();
    sb.setFaults({ seed: 2, http503: 0.05, itemWithoutIdEvery: 25 });
    const first = await startCli([...args, "--json"], env).done;
    expect(first.code).toBe(0);
    sb.setFaults({});
    // A reader keeps the WAL file alive after the writer exits, so its bytes can be scanned too.
    const reader = new BetterSqlite3(db, { readonly: true });
    try {
      reader.prepare("SELECT COUNT(*) FROM members").get();
      await sb.advance();
      // The canary joins after the day's changes, so that no simulated deletion takes it away.
      const client = createClient({ baseUrl: sb.baseUrl, apiKey: sb.keys.full });
      const group = sandboxData(sb).groups[0] as { id: string; plans: { id: string }[] };
      const accepted = await client.addSubscriber(group.id, {
        subscribers: [{ plan: group.plans[0]!.id, self: { firstName: "Canary", lastName: "Bird", dateOfBirth: "1990-02-28", ssn: CANARY, memberType: "employee" } }],
      });
      expect((await client.waitForEnrollmentRequest(accepted.enrollmentRequestId as string, { timeoutMs: EVENT_DEADLINE_MS })).status).toBe("succeeded");
      await client.close();
      collectSsns();
      expect(ssns.has(CANARY)).toBe(true);
      const second = await startCli(args, env).done;
      expect(second.code).toBe(0);
      const runs = await startCli(["runs"], env).done;
      expect(existsSync(`${db}-wal`)).toBe(true);
      expect(reader.prepare("SELECT COUNT(*) FROM quarantine").pluck().get()).toBeGreaterThan(0);
      expect(reader.prepare("SELECT COUNT(*) FROM members WHERE ssn_last4 = '4320'").pluck().get()).toBe(1);

      const places: [string, Buffer][] = [
        ...[db, `${db}-wal`, `${db}-shm`, `${db}.pii-key`].filter(existsSync).map((f) => [f, readFileSync(f)] as [string, Buffer]),
        ...filesUnder(join(dir, "deltas")).map((f) => [f, readFileSync(f)] as [string, Buffer]),
        ...[first, second, runs].flatMap((r, i) => [[`stdout ${i}`, Buffer.from(r.stdout)], [`stderr ${i}`, Buffer.from(r.stderr)]] as [string, Buffer][]),
      ];
      expect(places.length).toBeGreaterThan(8);
      for (const [where, bytes] of places) {
        const text = bytes.toString("latin1");
        for (const m of text.matchAll(/\d{3}-\d{2}-\d{4}|\d{9}/g)) {
          const dashed = m[0].length === 9 ? `${m[0].slice(0, 3)}-${m[0].slice(3, 5)}-${m[0].slice(5)}` : m[0];
          expect(ssns.has(dashed), `an SSN in ${where}`).toBe(false);
        }
        expect(text.includes(sb.keys.full), `the API key in ${where}`).toBe(false);
      }
    } finally {
      reader.close();
    }
  });
});
