/**
 * Untrusted text is shown with its control characters escaped, everywhere the built CLI prints it:
 * a service's error message (stderr of sync, its --json, the stored run error and `runs`), a run
 * error stored by an older version (`runs`), a group's name (reconcile's summary, summary.md), a
 * config value (`config check`). Planted: ESC[2J (clears the screen), U+202E (turns the line
 * around), C1 NEL and BEL. The text output holds no byte below 0x20 but newline and tab, none of
 * 0x7f-0x9f and no bidi control; --json still parses back.
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";

const PLANT = "Evil\u001b[2J\u202e\u0085\u0007Name";
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

let sb: Sandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ members: 30, groups: 2, seed: 38 });
  dir = mkdtempSync(join(tmpdir(), "bsync-control-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function workdir(name: string, config: unknown = { http: { retry: { maxAttempts: 1 } } }): { cwd: string; db: string; env: Record<string, string> } {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  const db = join(cwd, "snap.db");
  writeFileSync(join(cwd, "benefits-sync.config.json"), JSON.stringify(config));
  return { cwd, db, env: { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db, BENEFITS_PII_KEY: "control-chars-pii-key-0123456789" } };
}

function expectNoControl(where: string, text: string): void {
  const hit = CONTROL.exec(text);
  expect(hit ? `${where}: U+${hit[0].charCodeAt(0).toString(16).padStart(4, "0")} at ${hit.index} in ${JSON.stringify(text.slice(Math.max(0, hit.index - 40), hit.index + 20))}` : undefined).toBeUndefined();
}

/** Run the built CLI in `w`, expect `code`, and check its output holds no control character; its stdout. */
async function cli(w: { cwd: string; env: Record<string, string> }, args: readonly string[], code: number, shows?: string): Promise<string> {
  const r = await startCli(args, w.env, w.cwd).done;
  expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(code);
  if (shows !== undefined) expect(r.stdout + r.stderr).toContain(shows);
  expectNoControl(args.join(" "), r.stdout + r.stderr);
  return r.stdout;
}

function sql<T>(db: string, f: (c: BetterSqlite3.Database) => T): T {
  const conn = new BetterSqlite3(db);
  try {
    return f(conn);
  } finally {
    conn.close();
  }
}

describe("untrusted text is printed with its control characters escaped", () => {
  it("a service's error message: sync, sync --json, the stored run error, runs", async () => {
    const w = workdir("service-error");
    sb.setFaults({ pathPrefix: "/v2/groups", http400: 1, errorMessage: `group ${PLANT} is not valid` });
    try {
      await cli(w, ["sync"], 1, "Evil\\x1b[2J\\u202e\\x85\\x07Name");
      const json = await cli(w, ["sync", "--json"], 1);
      const report = JSON.parse(json.trim().split("\n").at(-1) ?? "{}") as { error?: { message: string } };
      expect(report.error?.message).toContain("Evil\\x1b[2J\\u202e\\x85\\x07Name");
    } finally {
      sb.setFaults({});
    }
    const stored = sql(w.db, (c) => c.prepare("SELECT error FROM runs WHERE error IS NOT NULL").pluck().all() as string[]);
    expect(stored.length).toBeGreaterThan(0);
    for (const e of stored) expectNoControl("runs.error", e);
    await cli(w, ["runs"], 0, "Evil\\x1b[2J");
  });

  it("a run error stored as it came (an older version), shown by runs and runs --json", async () => {
    const w = workdir("stored");
    await cli(w, ["sync"], 0);
    sql(w.db, (c) => c.prepare("UPDATE _runs SET error = ? WHERE run_id = (SELECT MAX(run_id) FROM _runs)").run(`SERVER_ERROR: ${PLANT}\r\u009b2J`));
    await cli(w, ["runs"], 0, "Evil\\x1b[2J\\u202e\\x85\\x07Name\\x0d\\x9b2J");
    const json = await cli(w, ["runs", "--json"], 0);
    const rows = JSON.parse(json) as { error: string | null }[];
    expect(rows.map((r) => r.error)).toContain(`SERVER_ERROR: ${PLANT}\r\u009b2J`);
  });

  it("a group's name in reconcile's summary and summary.md", async () => {
    const w = workdir("reconcile");
    for (let i = 0; i < 2; i++) await cli(w, ["sync"], 0);
    const changed = sql(w.db, (c) => c.prepare("UPDATE _groups_v SET sponsorName = ?").run(PLANT).changes);
    expect(changed).toBeGreaterThan(0);
    const out = join(w.cwd, "report");
    await cli(w, ["reconcile", "--from", "1", "--to", "2", "--out", out], 0);
    const summary = readFileSync(join(out, "summary.md"), "utf8");
    expect(summary).toContain("Evil\\x1b[2J\\u202e\\x85\\x07Name");
    expectNoControl("summary.md", summary);
  });

  it("a config value echoed by config check", async () => {
    const w = workdir("config", { http: { concurrency: `x${PLANT}` } });
    await cli(w, ["config", "check"], 2, "http.concurrency: expected");
    await cli(w, ["config", "check"], 2, "\\u202e");
  });
});
