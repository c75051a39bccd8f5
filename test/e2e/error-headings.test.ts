/**
 * Exit 2 says what the user has to fix, under a heading of its family: the arguments given, a
 * file named, or the configuration. Run through the built CLI, as a user would.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCli } from "../helpers/cli-process.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bsync-headings-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A service that is never reached: every case is refused before anything is sent. */
const service = { BENEFITS_BASE_URL: "http://127.0.0.1:9", BENEFITS_API_KEY: "sk_test_headings_0123" };
const cli = (args: string[], env: Record<string, string> = service) => startCli(args, env, dir).done;

describe("the heading of an exit-2 error names its family", () => {
  it("arguments: --claims-since after --claims-until, a job that does not exist", async () => {
    const since = await cli(["sync", "--db", join(dir, "a.db"), "--claims-since", "2026-02-01", "--claims-until", "2026-01-01"]);
    expect(since.code).toBe(2);
    expect(since.stderr).toBe("benefits-sync sync: Invalid arguments:\n  - --claims-since 2026-02-01 is after --claims-until 2026-01-01\n");
    const job = await cli(["run", "no-such-job", "--db", join(dir, "a.db")]);
    expect(job.code).toBe(2);
    expect(job.stderr).toMatch(/^benefits-sync run: Invalid arguments:\n {2}- no job named "no-such-job"/);
  });

  it("a file: a census file that is not there, a snapshot that is not there yet", async () => {
    const census = await cli(["census", "apply", join(dir, "nope.csv"), "--group", "G1", "--db", join(dir, "a.db")]);
    expect(census.code).toBe(2);
    expect(census.stderr).toBe(`benefits-sync census apply: Cannot use a file:\n  - FILE: cannot read the census file ${join(dir, "nope.csv")}: no such file\n`);
    const runs = await cli(["runs", "--db", join(dir, "none.db")]);
    expect(runs.code).toBe(2);
    expect(runs.stderr).toMatch(/^benefits-sync runs: Cannot use a file:\n {2}- db: no snapshot at /);
  });

  it("the configuration: a bad key in the config file stays `Invalid configuration`", async () => {
    writeFileSync(join(dir, "bad.json"), JSON.stringify({ http: { concurrency: 0 } }));
    const r = await cli(["runs", "--config", join(dir, "bad.json"), "--db", join(dir, "a.db")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^benefits-sync runs: Invalid configuration:\n {2}- http\.concurrency: expected a positive integer, got 0/);
    for (const out of [r.stderr, r.stdout]) expect(out).not.toContain(service.BENEFITS_API_KEY);
  });
});
