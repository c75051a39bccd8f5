/**
 * One validation of the configuration, at load, for every command: the built CLI's `sync`, `jobs`,
 * `schedule` and `config check` refuse the same file for the same reasons (a misspelt job name, a
 * cron field out of range, a configured sink's start that contradicts the snapshot), with exit 2,
 * before anything is fetched or recorded.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { ALL_CLAIMS } from "../helpers/sandbox-truth.js";

let sb: Sandbox;
let dir: string;
const window = ["--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to];

beforeAll(async () => {
  sb = await startSandbox({ members: 30, groups: 2, seed: 28 });
  dir = mkdtempSync(join(tmpdir(), "bsync-config-check-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function setup(name: string, config: unknown) {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  const db = join(cwd, "snap.db");
  writeFileSync(join(cwd, "benefits-sync.config.json"), JSON.stringify(config));
  const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db, BENEFITS_PII_KEY: "config-check-test-pii-key-0123456789" };
  const cli = async (...args: string[]) => {
    const r = await startCli(args, env, cwd).done;
    return { ...r, code: r.code ?? -1 };
  };
  const runCount = () => {
    if (!existsSync(db)) return 0;
    const d = new BetterSqlite3(db, { readonly: true });
    try {
      return d.prepare("SELECT COUNT(*) FROM runs").pluck().get() as number;
    } finally {
      d.close();
    }
  };
  return { cwd, db, cli, runCount };
}

describe("one validator for sync, jobs, schedule and config check", () => {
  it("a misspelt job name: sync refuses it as jobs does (exit 2, the key named), and records no run", async () => {
    const t = setup("jobname", { jobs: { "nightly-claims-exprt": { enabled: false } } });
    const jobs = await t.cli("jobs");
    expect(jobs.code).toBe(2);
    expect(jobs.stderr).toMatch(/jobs\.nightly-claims-exprt: no such job/);
    const sync = await t.cli("sync", ...window, "--quiet");
    expect(sync.stderr).toMatch(/jobs\.nightly-claims-exprt: no such job; the jobs are .*nightly-claims-export/);
    expect(sync.code).toBe(2);
    expect(t.runCount()).toBe(0);
    const check = await t.cli("config", "check");
    expect(check.code).toBe(2);
    expect(check.stdout + check.stderr).toMatch(/benefits-sync\.config\.json: jobs\.nightly-claims-exprt: no such job/);
  });

  it("*/61 as the minute: jobs, sync and schedule refuse it, naming the job, the field and the range", async () => {
    const t = setup("step", { jobs: { "hourly-member-sync": { schedule: "*/61 * * * *" } } });
    const expected = /jobs\.hourly-member-sync\.schedule: the minute field "\*\/61" steps by 61; a minute step runs from 1 to 59/;
    for (const args of [["jobs"], ["sync", ...window, "--quiet"], ["schedule"]]) {
      const r = await t.cli(...args);
      expect(r.stderr, args.join(" ")).toMatch(expected);
      expect(r.code, args.join(" ")).toBe(2);
    }
    expect(t.runCount()).toBe(0);
  });

  it("a configured sink's fromRun that no run of the snapshot can be: sync exits 2 before the run, not 1 after it", async () => {
    const t = setup("fromrun", { sinks: { lake: { type: "folder", dir: "lake", fromRun: 9 } } });
    const sync = await t.cli("sync", ...window, "--quiet");
    expect(sync.stderr).toMatch(/sinks\.lake\.fromRun: no run 9 in this snapshot/);
    expect(sync.code).toBe(2);
    expect(t.runCount()).toBe(0);
    expect(existsSync(join(t.cwd, "lake"))).toBe(false);
  });

  it("a configured sink's fromRun that contradicts what the folder received: refused at load, naming the sink", async () => {
    const t = setup("contra", { sinks: { lake: { type: "folder", dir: "lake" } } });
    for (let i = 0; i < 2; i++) expect((await t.cli("sync", ...window, "--quiet")).code).toBe(0);
    writeFileSync(join(t.cwd, "benefits-sync.config.json"), JSON.stringify({ sinks: { lake: { type: "folder", dir: "lake", fromRun: 2 } } }));
    const sync = await t.cli("sync", ...window, "--quiet");
    expect(sync.stderr).toMatch(/sinks\.lake\.fromRun: .*lake.* has already received runs from run 1/);
    expect(sync.code).toBe(2);
    expect(t.runCount()).toBe(2);
    const check = await t.cli("config", "check");
    expect(check.code).toBe(2);
    expect(check.stdout + check.stderr).toMatch(/benefits-sync\.config\.json: sinks\.lake\.fromRun: /);
  });

  it("a warehouse whose password variable is unset: sync and config check refuse it; runs and jobs, which deliver nothing, do not", async () => {
    const t = setup("urlenv", {});
    expect((await t.cli("sync", ...window, "--quiet")).code).toBe(0);
    writeFileSync(join(t.cwd, "benefits-sync.config.json"), JSON.stringify({ sinks: { wh: { type: "postgres", urlEnv: "WAREHOUSE_URL_FOR_TEST" } } }));
    for (const args of [["sync", ...window, "--quiet"], ["config", "check"]]) {
      const r = await t.cli(...args);
      expect(r.stdout + r.stderr, args.join(" ")).toMatch(/sinks\.wh.*WAREHOUSE_URL_FOR_TEST/);
      expect(r.code, args.join(" ")).toBe(2);
    }
    expect(t.runCount()).toBe(1);
    for (const args of [["runs"], ["jobs"]]) {
      const r = await t.cli(...args);
      expect(r.stderr, args.join(" ")).not.toMatch(/WAREHOUSE_URL_FOR_TEST/);
      expect(r.code, args.join(" ")).toBe(0);
    }
  });

  it("problems in several layers (a bad baseUrl, a */61 schedule, a misspelt job, two bad sinks): config check names them all in one go, exit 2", async () => {
    const t = setup("several", {
      baseUrl: "not a url",
      jobs: { "hourly-member-sync": { schedule: "*/61 * * * *" }, "nightly-claims-exprt": { enabled: false } },
      sinks: { lake: { type: "folder" }, wh: { type: "postgres", urlEnv: "WAREHOUSE_URL_UNSET_FOR_TEST" } },
    });
    // The file's baseUrl, not the environment's.
    const r = await startCli(["config", "check"], { BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: t.db }, t.cwd).done;
    const said = `exit ${r.code}\n${r.stderr}`;
    expect(r.code, said).toBe(2);
    const file = "benefits-sync.config.json";
    expect(r.stderr, said).toContain(`${file}: baseUrl: expected an http(s) URL, got "not a url"`);
    expect(r.stderr, said).toMatch(/jobs\.hourly-member-sync\.schedule: the minute field "\*\/61" steps by 61/);
    expect(r.stderr, said).toMatch(/jobs\.nightly-claims-exprt: no such job/);
    expect(r.stderr, said).toMatch(/sinks\.lake\.dir: expected a directory/);
    expect(r.stderr, said).toMatch(/sinks\.wh\.urlEnv: the environment variable WAREHOUSE_URL_UNSET_FOR_TEST is not set/);
    expect(r.stderr, said).toContain(`${file}: 5 problems;`);
    expect(existsSync(t.db), "config check created the snapshot").toBe(false);
  });
});

describe("config check: a typo in a key hides nothing below it", () => {
  it("key typos beside a misspelt job name and the cron 0 25 * * 0 (under a misspelt `jobs` too): every problem in one run, exit 2", async () => {
    const jobs = { "hourly-member-sycn": { schedlue: "15 * * * *" }, "weekly-full-walk": { schedule: "0 25 * * 0", enabeld: true } };
    const typos = { htpp: { concurrency: 4 }, sinks: { out: { type: "folder", dir: "./out", formt: "csv" } }, resources: { claims: { lookbakDays: 30 } } };
    for (const [name, config] of [
      ["typos", { ...typos, jobs }],
      ["jos", { ...typos, jos: jobs }],
    ] as const) {
      const t = setup(name, config);
      const r = await t.cli("config", "check");
      const said = `${name}: exit ${r.code}\n${r.stderr}`;
      expect(r.code, said).toBe(2);
      const file = "benefits-sync.config.json";
      const jobsKey = name === "jos" ? "jos" : "jobs";
      expect(r.stderr, said).toContain(`${file}: htpp: unknown key (did you mean "http"?); what it holds is checked as "http"`);
      expect(r.stderr, said).toContain(`${file}: sinks.out.formt: unknown key (did you mean "format"?)`);
      expect(r.stderr, said).toContain(`${file}: resources.claims.lookbakDays: unknown key (did you mean "lookbackDays"?)`);
      expect(r.stderr, said).toContain(`${file}: ${jobsKey}.hourly-member-sycn.schedlue: unknown key (did you mean "schedule"?)`);
      expect(r.stderr, said).toContain(`${file}: ${jobsKey}.weekly-full-walk.enabeld: unknown key (did you mean "enabled"?)`);
      expect(r.stderr, said).toContain(`${file}: jobs.hourly-member-sycn: no such job; the jobs are`);
      expect(r.stderr, said).toContain(`${file}: jobs.weekly-full-walk.schedule: the hour field "25" has "25"`);
      if (name === "jos") expect(r.stderr, said).toContain(`${file}: jos: unknown key (did you mean "jobs"?); what it holds is checked as "jobs"`);
      expect(r.stderr, said).toContain(`${file}: ${name === "jos" ? 8 : 7} problems;`);
      expect(existsSync(t.db), "config check created the snapshot").toBe(false);
    }
  });
});

describe("config check tries the webhook receiver's setup as `webhooks serve` would", () => {
  const SECRET_A = "whsec-config-check-secret-aaaa-0123";
  const SECRET_B = "whsec-config-check-secret-bbbb-4567";
  const run = async (name: string, config: unknown, extraEnv: Record<string, string>) => {
    const t = setup(name, config);
    const r = await startCli(["config", "check"], { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: t.db, ...extraEnv }, t.cwd).done;
    return { ...r, out: r.stdout + r.stderr };
  };

  it("a short secret and an Auth whose variable is unset: exit 2, each named, no secret shown, nothing written", async () => {
    const r = await run("wh-bad", { webhooks: { auth: { type: "bearer", tokenEnv: "PORTAL_TOKEN_FOR_TEST" } } }, { BENEFITS_WEBHOOK_SECRET: `${SECRET_A},short-one` });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/webhooks serve would refuse to start: webhookSecrets\[1\].*at least 16 characters, got 9/);
    expect(r.stderr).toMatch(/webhooks serve would refuse to start: webhooks\.auth\.tokenEnv: the environment variable PORTAL_TOKEN_FOR_TEST is not set/);
    expect(r.stderr).toMatch(/2 problems for the webhook receiver; sync and jobs are not affected/);
    expect(r.out).not.toContain(SECRET_A);
    expect(r.out).not.toContain("short-one");
  });

  it("a certificate that cannot be read: exit 2 naming webhooks.tls.cert and the file", async () => {
    const r = await run("wh-tls", { webhooks: { tls: { cert: "no-such-cert.pem", key: "no-such-key.pem" } } }, { BENEFITS_WEBHOOK_SECRET: SECRET_A });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/webhooks\.tls\.cert: no-such-cert\.pem cannot be read \(ENOENT\)/);
    expect(r.stderr).toMatch(/webhooks\.tls\.key: no-such-key\.pem cannot be read \(ENOENT\)/);
  });

  it("a good setup: exit 0 and one line saying where it listens, how many secrets and which Auth, no secret shown", async () => {
    const r = await run("wh-good", { webhooks: { port: 9911, auth: { type: "bearer", tokenEnv: "PORTAL_TOKEN_FOR_TEST" } } }, { BENEFITS_WEBHOOK_SECRET: `${SECRET_A},${SECRET_B}`, PORTAL_TOKEN_FOR_TEST: "portal-token-value-0123456789" });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("  webhooks: http://127.0.0.1:9911/webhooks, 2 secrets, Auth: bearer token\n");
    for (const s of [SECRET_A, SECRET_B, "portal-token-value-0123456789"]) expect(r.out).not.toContain(s);
  });

  it("no webhook settings at all: exit 0, the line says it is not set up", async () => {
    const r = await run("wh-none", {}, {});
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ {2}webhooks: not set up \(no BENEFITS_WEBHOOK_SECRET/);
  });
});
