/**
 * The census and group-onboarding pages' examples, run as printed against the stand-in sandbox
 * they name: the data file written exactly as the page prints it, each command line through
 * `sh -c` with `benefits-sync` on the PATH; the one change is the pages' port 4010, swapped for a
 * free one in every line (a sandbox a reader left running may hold it). What they claim is checked
 * in the sandbox's own records (its listings and its count of the writes that reached it), not in
 * our output alone.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { censusSsns, expectNoCensusSsn, writtenFiles, type Place } from "../helpers/census-ssn-scan.js";
import { installedEnv, runPrinted, startOnFreePort, type PrintedServer } from "../helpers/printed-commands.js";
import { docPage, namedBlock, printedFile } from "../helpers/readme-blocks.js";

let dir: string;
let env: Record<string, string>;
let sandbox: PrintedServer | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "bsync-docs-onboarding-"));
  env = installedEnv(dir);
});
afterEach(async () => {
  await sandbox?.stop();
  sandbox = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** The port the pages print; their lines run with it swapped for a free one. */
const PRINTED_PORT = 4010;

/**
 * Start the block's first line (the sandbox) on a free port, the rest swapped to match; the key
 * the page prints must be the one its banner gives. `lines`: the block as it runs.
 */
async function serve(block: string[]): Promise<{ url: string; key: string; lines: string[]; says: string }> {
  expect(block[0]).toMatch(/^benefits-sync sandbox\b/);
  const started = await startOnFreePort(block, PRINTED_PORT, dir, env);
  sandbox = started.server;
  const [, ...rest] = started.lines;
  const url = /listening on (http:\/\/\S+?),/.exec(sandbox.banner)?.[1];
  const key = /full key:\s+(\S+)/.exec(sandbox.banner)?.[1];
  expect(url && key, `${started.says}\n${sandbox.banner}`).toBeTruthy();
  for (const l of rest.filter((x) => x.includes("BENEFITS_API_KEY="))) expect(l, started.says).toContain(`BENEFITS_BASE_URL=${url} BENEFITS_API_KEY=${key} `);
  return { url: url!, key: key!, lines: started.lines, says: started.says };
}

async function get<T>(url: string, key: string, path: string): Promise<T> {
  const res = await request(`${url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return (await res.body.json()) as T;
}
/** Every item of a listing, page after page. */
async function list<T extends { id: string }>(url: string, key: string, path: string): Promise<T[]> {
  const out: T[] = [];
  for (let after: string | undefined; ; ) {
    const page = await get<{ data: T[]; hasMore: boolean }>(url, key, `${path}${path.includes("?") ? "&" : "?"}${after ? `startAfter=${after}` : ""}`);
    out.push(...page.data);
    if (!page.hasMore || page.data.length === 0) return out;
    after = page.data.at(-1)!.id;
  }
}
/** The sandbox's own count of the write requests that reached it, by method and path. */
const writes = async (url: string) => ((await (await request(`${url}/_sandbox/info`)).body.json()) as { stats: { writes: Record<string, number> } }).stats.writes;

type Member = { id: string; firstName: string; lastName: string; dateOfBirth: string; subscriberId: string };
type Group = { id: string; groupId: string; plans: { id: string }[] };

describe("docs/census.md: the example", () => {
  it("runs as printed (port 4010 swapped for a free one): the plan lists the file's people and sends nothing, apply adds them once, the same apply again sends nothing", async () => {
    const page = docPage("census.md");
    const csv = printedFile(page, "census.csv");
    writeFileSync(join(dir, "census.csv"), csv);
    const block = namedBlock(page, "census: against the stand-in sandbox");
    const { url, key, lines, says } = await serve(block);
    // The page's claim: group 200000 has one plan (so the file needs no plan_id).
    const group = (await list<Group>(url, key, "/v2/groups")).find((g) => g.groupId === "200000");
    expect(group?.plans).toHaveLength(1);

    const outputs: Place[] = [];
    const results = [];
    for (const line of lines.slice(1)) {
      const r = runPrinted(line, dir, env);
      outputs.push([`${line} stdout`, r.stdout], [`${line} stderr`, r.stderr]);
      expect(r.status, `${line} (${says})\n${r.stderr}`).toBe(0);
      results.push(r);
    }
    const [, plan, apply, again] = results;
    expect(plan!.stdout).toContain("  subscribers to add: 2\n    line 2, plan");
    expect(plan!.stdout).toContain("with the dependents on line 3, 4\n    line 5, plan");
    expect(plan!.stdout).toContain("Nothing was sent");
    expect(apply!.stdout).toContain("Sent 1 request(s); 1 succeeded.");
    expect(again!.stdout).toContain("Nothing to send: the service already matches the file.");
    expect(readdirSync(join(dir, "census-demo.db.census", "results"))).toHaveLength(2);

    // The sandbox's records: one add-subscriber reached it, and the four people are there once, in one household each.
    expect(await writes(url)).toEqual({ [`POST /v3/groups/${group!.id}/enroll/add-subscriber`]: 1 });
    const people = await list<Member>(url, key, "/v2/members?groupId=200000");
    const one = (first: string, last: string, dob: string) => {
      const found = people.filter((m) => m.firstName === first && m.lastName === last && m.dateOfBirth === dob);
      expect(found, `${first} ${last}`).toHaveLength(1);
      return found[0]!;
    };
    const nadia = one("Nadia", "Hire", "1991-03-04");
    expect([one("Noel", "Hire", "1990-05-06").subscriberId, one("Nico", "Hire", "2020-07-08").subscriberId]).toEqual([nadia.subscriberId, nadia.subscriberId]);
    expect(one("Omar", "Second", "1985-09-10").subscriberId).not.toBe(nadia.subscriberId);
    expectNoCensusSsn([...outputs, ...writtenFiles(dir, [join(dir, "census.csv")])], censusSsns(csv));
  });
});

describe("docs/groups-create.md: the printed group file", () => {
  it("creates the group and enrolls its members as printed (port 4010 swapped for a free one); run again, it sends nothing", async () => {
    const page = docPage("groups-create.md");
    const file = printedFile(page, "acme.json");
    writeFileSync(join(dir, "acme.json"), file);
    const block = namedBlock(page, "groups create: against the stand-in sandbox");
    const { url, key, lines, says } = await serve(block);
    expect(block).toHaveLength(2);

    const first = runPrinted(lines[1]!, dir, env);
    expect(first.status, `${says}\n${first.stderr}`).toBe(0);
    expect(first.stdout).toContain("group G-2027-ACME: created");
    expect(first.stdout).toContain("members: 2 enrolled, 0 already enrolled, 0 failed, 0 unknown, 0 not sent");
    const second = runPrinted(lines[1]!, dir, env);
    expect(second.status, `${says}\n${second.stderr}`).toBe(0);
    expect(second.stdout).toContain("group G-2027-ACME: already there");

    // The sandbox's records: the group once, its two members with the file's memberIds, one create and one enrollment sent.
    const created = (await list<Group>(url, key, "/v2/groups")).filter((g) => g.groupId === "G-2027-ACME");
    expect(created).toHaveLength(1);
    const enrolled = await list<Member>(url, key, "/v2/members?groupId=G-2027-ACME");
    expect(enrolled.map((m) => [m.id, m.firstName]).sort()).toEqual([["acme-0001", "Ada"], ["acme-0002", "Bo"]]);
    expect(await writes(url)).toEqual({ "POST /v2/groups": 1, [`POST /v2/groups/${created[0]!.id}/enroll/initial-enrollment`]: 1 });
    const ssns = [...file.matchAll(/"ssn": "([\d-]+)"/g)].map((m) => m[1]!);
    expectNoCensusSsn([[`first stdout`, first.stdout], [`first stderr`, first.stderr], [`second stdout`, second.stdout], [`second stderr`, second.stderr]], ssns);
  });
});
