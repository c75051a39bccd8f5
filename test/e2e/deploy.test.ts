/**
 * deploy/: the cron file's lines run as pasted, and the systemd unit passes `systemd-analyze
 * verify`. The cron lines run as cron runs them: the five time fields taken off, `\%` turned into
 * `%` (cron's only rewrite), the file's environment lines applied, `sh -c` on the rest. The test
 * changes only what a user edits, the environment lines' values (the snapshot's folder, the
 * service's URL, the PATH to the installed command), pointing them at a sandbox it starts.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { CLI } from "../helpers/cli-process.js";
import { docPage, namedBlocks, readmeBlocks } from "../helpers/readme-blocks.js";
import { runDir } from "../helpers/run-folders.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const CRON = join(root, "deploy", "benefits-sync.cron");
const UNITS: [string, string][] = [
  ["benefits-sync-schedule.service", "/usr/local/bin/benefits-sync schedule"],
  ["benefits-sync-webhooks.service", "/usr/local/bin/benefits-sync webhooks serve"],
];

interface CronLine {
  readonly line: string;
  readonly command: string;
}

/** A crontab's environment lines (NAME=value, in order) and its job lines. */
function parseCrontab(text: string): { env: [string, string][]; jobs: CronLine[] } {
  const env: [string, string][] = [];
  const jobs: CronLine[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
    const job = /^\s*(?:\S+\s+){5}(.*)$/.exec(line);
    const assign = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (assign && !/^\s*[\d*@]/.test(line)) env.push([assign[1]!, assign[2]!]);
    else if (job) jobs.push({ line, command: job[1]! });
    else throw new Error(`not a crontab line: ${line}`);
  }
  return { env, jobs };
}

/** What cron hands to the shell: an unescaped % would end the command (the rest is stdin). */
function asCronRunsIt(command: string): string {
  expect(command, "an unescaped % ends a cron command").not.toMatch(/(^|[^\\])%/);
  expect(command, "cron has no backslash continuations").not.toMatch(/\\$/);
  return command.replace(/\\%/g, "%");
}

const firstOfMonth = (d: Date, back: number) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - back, 1));
const ymd = (d: Date) => d.toISOString().slice(0, 10);

describe("deploy/benefits-sync.cron: every line runs as pasted against a sandbox", () => {
  let sb: Sandbox;
  let tmp: string;
  let home: string;
  let env: Record<string, string>;
  const crontab = parseCrontab(readFileSync(CRON, "utf8"));

  beforeAll(async () => {
    sb = await startSandbox({ members: 300, groups: 3, seed: 7 });
    tmp = mkdtempSync(join(tmpdir(), "bs-cron-"));
    home = join(tmp, "home");
    mkdirSync(home);
    writeFileSync(join(home, "api-key"), `${sb.keys.full}\n`, { mode: 0o600 });
    // The installed command: `benefits-sync` on the PATH.
    const bin = join(tmp, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "benefits-sync"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    chmodSync(join(bin, "benefits-sync"), 0o755);
    // What a user edits: the values of the file's environment lines.
    const edits: Record<string, string> = { BENEFITS_SYNC_HOME: home, BENEFITS_BASE_URL: sb.baseUrl, PATH: `${bin}:/usr/bin:/bin` };
    for (const name of Object.keys(edits)) expect(crontab.env.map(([k]) => k), `the cron file sets ${name}`).toContain(name);
    // cron's own environment, then the file's lines.
    env = { HOME: home, LOGNAME: "benefits-sync", SHELL: "/bin/sh", PATH: "/usr/bin:/bin" };
    for (const [k, v] of crontab.env) env[k] = edits[k] ?? v;
  });
  afterAll(async () => {
    await sb?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  // Not spawnSync: the sandbox answers from this very process.
  const sh = (command: string) =>
    new Promise<{ status: number | null; stderr: string }>((resolve) => {
      const child = spawn("sh", ["-c", asCronRunsIt(command)], { cwd: tmp, env, stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.once("close", (status) => resolve({ status, stderr }));
    });
  const lastRun = (job: string) => {
    const db = new BetterSqlite3(join(home, "benefits-sync.db"), { readonly: true });
    try {
      return db.prepare("SELECT run_id, status FROM runs WHERE job = ? ORDER BY run_id DESC LIMIT 1").get(job) as { run_id: number; status: string } | undefined;
    } finally {
      db.close();
    }
  };

  it("has environment lines at the top, then one command per line", () => {
    expect(crontab.env.map(([k]) => k)).toEqual(["SHELL", "PATH", "BENEFITS_SYNC_HOME", "BENEFITS_BASE_URL"]);
    expect(crontab.jobs.length).toBe(5);
  });

  it.each(["hourly-member-sync", "daily-groups-designs", "weekly-full-walk"])("the %s line exits 0 and records a succeeded run of that job", async (job) => {
    const line = crontab.jobs.filter((j) => j.command.includes(` run ${job} `));
    expect(line.length).toBe(1);
    const r = await sh(line[0]!.command);
    expect(r.status, r.stderr).toBe(0);
    expect(lastRun(job)?.status, readFileSync(join(home, "cron.log"), "utf8")).toBe("succeeded");
  });

  it("the nightly claims line exits 0, records a sync and writes that run's folder in claims-deltas/", async () => {
    const line = crontab.jobs.filter((j) => j.command.includes(" sync --resources groups,claims "));
    expect(line.length).toBe(1);
    const r = await sh(line[0]!.command);
    expect(r.status, r.stderr).toBe(0);
    const run = lastRun("sync");
    expect(run?.status, readFileSync(join(home, "claims.log"), "utf8")).toBe("succeeded");
    expect(existsSync(join(home, "claims-deltas", runDir(run!.run_id), "manifest.json"))).toBe(true);
    const summary = JSON.parse(readFileSync(join(home, "claims.log"), "utf8").trim().split("\n").at(-1)!) as { runId: number };
    expect(summary.runId).toBe(run!.run_id);
  });

  it("the monthly line runs the monthly-reconcile job: the run as of last month's 1st against the run as of this month's, into reconcile-YYYY-MM/", async () => {
    // A month of history in a minute: the runs so far are dated as if the last one ran the day
    // before this month's 1st and the others the day before last month's.
    const now = new Date();
    const lastFirst = firstOfMonth(now, 1);
    const thisFirst = firstOfMonth(now, 0);
    const db = new BetterSqlite3(join(home, "benefits-sync.db"));
    const ids = db.prepare("SELECT run_id FROM _runs ORDER BY run_id").pluck().all() as number[];
    expect(ids.length).toBeGreaterThanOrEqual(2);
    const dated = db.prepare("UPDATE _runs SET started_at = ?, finished_at = ? WHERE run_id = ?");
    ids.forEach((id, i) => {
      const day = new Date((i === ids.length - 1 ? thisFirst : lastFirst).getTime() - 86_400_000);
      const at = `${ymd(day)}T00:00:${String(i).padStart(2, "0")}.000Z`;
      dated.run(at, at, id);
    });
    db.close();

    const line = crontab.jobs.filter((j) => j.command.includes(" run monthly-reconcile "));
    expect(line.length).toBe(1);
    const logBefore = existsSync(join(home, "cron.log")) ? readFileSync(join(home, "cron.log"), "utf8") : "";
    const r = await sh(line[0]!.command);
    const log = readFileSync(join(home, "cron.log"), "utf8");
    expect(r.status, log).toBe(0);
    // --quiet: nothing in the log on success.
    expect(log).toBe(logBefore);
    const folder = join(home, `reconcile-${ymd(lastFirst).slice(0, 7)}`);
    expect(existsSync(join(folder, "report.html"))).toBe(true);
    const report = JSON.parse(readFileSync(join(folder, "report.json"), "utf8")) as { from: { runId: number }; to: { runId: number }; arithmeticHolds: boolean };
    expect(report).toMatchObject({ from: { runId: ids.at(-2) }, to: { runId: ids.at(-1) }, arithmeticHolds: true });
  });

  it("docs/jobs.md prints the cron file's lines as they are in it, and the README's lines are among them", () => {
    const lines = readFileSync(CRON, "utf8").split("\n").filter((l) => l !== "" && !l.startsWith("#"));
    const [whole, ...others] = namedBlocks(docPage("jobs.md"), "deploy/benefits-sync.cron");
    expect(whole).toEqual(lines);
    const readme = readmeBlocks("deploy/benefits-sync.cron");
    expect(readme.length).toBeGreaterThanOrEqual(1);
    for (const b of [...others, ...readme]) for (const l of b) expect(lines).toContain(l);
  });
});

const hasAnalyze = spawnSync("sh", ["-c", "command -v systemd-analyze"]).status === 0;

describe.each(UNITS)("deploy/%s", (file, execStart) => {
  const unit = readFileSync(join(root, "deploy", file), "utf8");
  const service = new Map<string, string[]>();
  for (const m of unit.split("[Service]")[1]!.split(/^\[/m)[0]!.matchAll(/^(\w+)=(.*)$/gm)) service.set(m[1]!, [...(service.get(m[1]!) ?? []), m[2]!]);
  const one = (key: string) => service.get(key)?.join(" ");

  it("has the hardening a reviewer expects, and a stop by SIGTERM (exit 143) is a success", () => {
    expect(one("User")).toBe("benefits-sync");
    expect(one("Group")).toBe("benefits-sync");
    expect(one("NoNewPrivileges")).toBe("yes");
    expect(one("PrivateTmp")).toBe("yes");
    expect(one("ProtectSystem")).toBe("strict");
    expect(one("ProtectHome")).toBe("yes");
    // The snapshot's folder, where the command runs, is the only writable path.
    expect(one("ReadWritePaths")).toBe(one("WorkingDirectory"));
    expect(one("KillSignal")).toBe("SIGTERM");
    expect(one("SuccessExitStatus")?.split(/\s+/)).toContain("143");
    expect(one("TimeoutStopSec")).toMatch(/^\d+(min|s)?$/);
    expect(one("Restart")).toBe("on-failure");
    expect(one("RestartPreventExitStatus")?.split(/\s+/)).toContain("2");
    expect(one("ExecStart")).toBe(execStart);
  });

  it.skipIf(!hasAnalyze)("passes systemd-analyze verify (skipped where systemd-analyze is not installed)", () => {
    // verify also checks that ExecStart's program exists; this machine has no /usr/local/bin/benefits-sync,
    // so that path alone is pointed at the built CLI, in a copy.
    const tmp = mkdtempSync(join(tmpdir(), "bs-unit-"));
    try {
      const bin = join(tmp, "benefits-sync");
      writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
      chmodSync(bin, 0o755);
      expect(unit.split("/usr/local/bin/benefits-sync").length).toBe(2);
      const copy = join(tmp, file);
      writeFileSync(copy, unit.replace("/usr/local/bin/benefits-sync", bin));
      const r = spawnSync("systemd-analyze", ["verify", copy], { encoding: "utf8" });
      expect({ status: r.status, out: r.stdout + r.stderr }).toEqual({ status: 0, out: "" });
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
