/**
 * A field the service adds without notice is told once: the run that first sees it names each new
 * path (paths only, never a value, an SSN's least of all), the snapshot keeps them in `new_fields`
 * with that run, and later runs say nothing. The sandbox serves the extra fields on demand.
 */
import BetterSqlite3 from "better-sqlite3";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCli, type CliRun } from "../helpers/cli-process.js";
import { waitUntil } from "../helpers/wait.js";

const SSN = "123-45-6789";
let dir: string;
let sandbox: CliRun;
let env: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "bsync-newfields-"));
  sandbox = startCli(["sandbox", "--members", "300", "--seed", "8"], {});
  let out = "";
  sandbox.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  const url = await waitUntil("the sandbox's banner", () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1]);
  const key = await waitUntil("the full key", () => /full key:\s+(\S+)/.exec(out)?.[1]);
  env = { BENEFITS_BASE_URL: url, BENEFITS_API_KEY: key, BENEFITS_DB: join(dir, "snap.db") };
});
afterAll(async () => {
  sandbox.child.kill("SIGTERM");
  await sandbox.done;
  rmSync(dir, { recursive: true, force: true });
});

const sync = () => startCli(["sync", "--json"], env, dir).done;
const doctor = (...args: string[]) => startCli(["doctor", ...args], env, dir).done;

describe("new field paths", () => {
  it("are told by the run that first sees them, kept with it, and never with a value", async () => {
    const first = await sync();
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).not.toMatch(/does not know/);
    const before = await doctor();
    expect(before.code, before.stderr).toBe(0);
    expect(before.stdout).toContain("New fields: none seen.");
    expect(JSON.parse((await doctor("--json")).stdout).newFields).toEqual([]);
    const plan = { extraFields: { members: { preferredLanguage: "en", benefitsContact: { name: "Pat", ssn: SSN } }, claims: { priorAuthNumber: "PA-1" } } };
    const res = await request(`${env.BENEFITS_BASE_URL}/_sandbox/faults`, { method: "POST", body: JSON.stringify(plan), headers: { "content-type": "application/json" } });
    expect(res.statusCode, await res.body.text()).toBe(200);

    const second = await sync();
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain(
      "The service sent 4 fields benefits-sync does not know, first seen in run 2 (claims: priorAuthNumber; members: benefitsContact, " +
        "benefitsContact.ssn (an SSN by its name: stored as benefitsContact.ssn_token and benefitsContact.ssn_last4), preferredLanguage). " +
        "They are stored as sent, but for what the SSN rule masked; `benefits-sync doctor` lists them.",
    );
    expect(JSON.parse(second.stdout).newFields).toEqual([
      { resource: "claims", path: "priorAuthNumber", masked: null },
      { resource: "members", path: "benefitsContact", masked: null },
      { resource: "members", path: "benefitsContact.ssn", masked: "name" },
      { resource: "members", path: "preferredLanguage", masked: null },
    ]);
    expect(second.stdout + second.stderr).not.toContain(SSN);

    const third = await sync();
    expect(third.code, third.stderr).toBe(0);
    expect(third.stderr).not.toMatch(/does not know/);

    type Recorded = { resource: string; path: string; firstRunId: number; firstSeenAt: string; masked: string | null };
    let recorded: Recorded[];
    const db = new BetterSqlite3(env.BENEFITS_DB!, { readonly: true });
    try {
      const rows = db.prepare("SELECT resource, path, first_run_id FROM new_fields ORDER BY resource, path").all();
      expect(rows).toEqual([
        { resource: "claims", path: "priorAuthNumber", first_run_id: 2 },
        { resource: "members", path: "benefitsContact", first_run_id: 2 },
        { resource: "members", path: "benefitsContact.ssn", first_run_id: 2 },
        { resource: "members", path: "preferredLanguage", first_run_id: 2 },
      ]);
      expect(JSON.stringify(db.prepare("SELECT * FROM new_fields").all())).not.toContain(SSN);
      recorded = db.prepare("SELECT resource, path, first_run_id AS firstRunId, first_seen_at AS firstSeenAt, masked FROM new_fields ORDER BY resource, path").all() as Recorded[];
    } finally {
      db.close();
    }

    // doctor lists them as the snapshot recorded them.
    const told = await doctor("--json");
    expect(told.code, told.stderr).toBe(0);
    expect(JSON.parse(told.stdout).newFields).toEqual(recorded);
    const table = await doctor();
    expect(table.code, table.stderr).toBe(0);
    for (const f of recorded) expect(table.stdout).toMatch(new RegExp(`^${f.resource}\\s+${f.path.replace(/\./g, "\\.")}\\s+2\\s+${f.firstSeenAt.replace(/\./g, "\\.")}${f.masked ? "\\s+an SSN by its name: .+" : ""}$`, "m"));
    expect(table.stdout + told.stdout).not.toContain(SSN);
  });

  it("a new field the SSN rule masked says so: in the notice, sync --json, the table, doctor and doctor --json", async () => {
    // A snapshot of its own, whose first run sees the fields: a key the rule names at the top and
    // under a known object (`address` is in the schemas, `socialSecurityNumber` below it is not).
    const own = { ...env, BENEFITS_DB: join(dir, "masked.db") };
    // Issue 38's forms too: a key named for a taxpayer id, a list of typed pairs, a dashed SSN in a note.
    const plan = {
      extraFields: {
        members: {
          socialSecurityNumber: SSN,
          address: { line1: "1 Main St", socialSecurityNumber: SSN },
          preferredLanguage: "en",
          taxpayerId: SSN,
          governmentIds: [{ type: "SSN", value: SSN }],
          notes: `called about ${SSN}`,
        },
      },
    };
    const res = await request(`${env.BENEFITS_BASE_URL}/_sandbox/faults`, { method: "POST", body: JSON.stringify(plan), headers: { "content-type": "application/json" } });
    expect(res.statusCode, await res.body.text()).toBe(200);

    const first = await startCli(["sync", "--json"], own, dir).done;
    expect(first.code, first.stderr).toBe(0);
    const stored = (p: string) => `stored as ${p}_token and ${p}_last4`;
    expect(first.stderr).toContain(
      "The service sent 7 fields benefits-sync does not know, first seen in run 1 (members: " +
        `address.socialSecurityNumber (an SSN by its name: ${stored("address.socialSecurityNumber")}), governmentIds, ` +
        `governmentIds[].value (the SSN of a typed pair: ${stored("governmentIds[].value")}), notes (an SSN in its text: written [ssn:<token>] in place), preferredLanguage, ` +
        `socialSecurityNumber (an SSN by its name: ${stored("socialSecurityNumber")}), taxpayerId (an SSN by its name: ${stored("taxpayerId")})). ` +
        "They are stored as sent, but for what the SSN rule masked; `benefits-sync doctor` lists them.",
    );
    const expected = [
      { resource: "members", path: "address.socialSecurityNumber", masked: "name" },
      { resource: "members", path: "governmentIds", masked: null },
      { resource: "members", path: "governmentIds[].value", masked: "typed" },
      { resource: "members", path: "notes", masked: "text" },
      { resource: "members", path: "preferredLanguage", masked: null },
      { resource: "members", path: "socialSecurityNumber", masked: "name" },
      { resource: "members", path: "taxpayerId", masked: "name" },
    ];
    expect(JSON.parse(first.stdout).newFields).toEqual(expected);
    expect(first.stdout + first.stderr).not.toContain(SSN);

    const db = new BetterSqlite3(own.BENEFITS_DB, { readonly: true });
    try {
      expect(db.prepare("SELECT resource, path, masked FROM new_fields ORDER BY resource, path").all()).toEqual(expected);
      // What the marker says is what the snapshot holds: the served key is gone, its token and last 4 are there.
      const member = JSON.parse(db.prepare("SELECT data FROM members LIMIT 1").pluck().get() as string) as Record<string, Record<string, unknown>>;
      expect(Object.keys(member)).toEqual(expect.arrayContaining(["socialSecurityNumber_token", "socialSecurityNumber_last4"]));
      expect(Object.keys(member)).not.toContain("socialSecurityNumber");
      expect(Object.keys(member.address!)).toEqual(expect.arrayContaining(["socialSecurityNumber_token", "socialSecurityNumber_last4"]));
    } finally {
      db.close();
    }

    const told = await startCli(["doctor", "--json"], own, dir).done;
    expect(told.code, told.stderr).toBe(0);
    expect((JSON.parse(told.stdout).newFields as Record<string, unknown>[]).map(({ resource, path, masked }) => ({ resource, path, masked }))).toEqual(expected);
    const table = await startCli(["doctor"], own, dir).done;
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`^members\\s+socialSecurityNumber\\s+1\\s+\\S+\\s+an SSN by its name: ${stored("socialSecurityNumber")}$`, "m"));
    expect(table.stdout).toMatch(/^members\s+preferredLanguage\s+1\s+\S+$/m);
    expect(table.stdout + told.stdout).not.toContain(SSN);
  });

  it("doctor before any snapshot: none seen, and no snapshot file made", async () => {
    const fresh = join(dir, "none-yet.db");
    const r = await startCli(["doctor", "--json"], { ...env, BENEFITS_DB: fresh }, dir).done;
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).newFields).toEqual([]);
    const text = await startCli(["doctor"], { ...env, BENEFITS_DB: fresh }, dir).done;
    expect(text.stdout).toContain(`New fields: none seen (no snapshot yet at ${fresh}).`);
    expect(existsSync(fresh)).toBe(false);
  });

  it("doctor with a snapshot path that holds no snapshot: its checks still pass, and it says the file could not be read", async () => {
    const notOurs = join(dir, "notes.txt");
    writeFileSync(notOurs, "not a database\n");
    const r = await startCli(["doctor"], { ...env, BENEFITS_DB: notOurs }, dir).done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("All 6 checks passed.");
    expect(r.stdout).toContain("New fields: the snapshot could not be read (");
    expect(r.stdout).toContain(notOurs);
    expect(readFileSync(notOurs, "utf8")).toBe("not a database\n");
  });
});
