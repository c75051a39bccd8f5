/**
 * The member list answers 400 or 500 with a `message` that names a person and a date of birth, and
 * an `errors` array whose entries name the person too. The built CLI syncs against the sandbox over
 * loopback; the message text must reach none of `runs.error` (read from the SQLite file), `--json`
 * stdout, stderr, or the scheduler's `job.failed` log line, while the status, the path and the
 * entries' field paths do.
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";

const MESSAGE = "Email jane.roe@example.com is already taken by member Jane Roe born 1980-02-03";
const ISSUES = [
  { path: ["email"], message: "taken by Jane Roe (jane.roe@example.com)", code: "custom" },
  { path: ["dependents", 0, "dateOfBirth"], message: "1980-02-03 does not match Jane Roe's record", code: "custom" },
];
const PHI = ["Jane", "Roe", "1980-02-03", "jane.roe@example.com", "already taken"];
const PII = "people-error-text-pii-key-0123456789";

let sb: Sandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ members: 40, groups: 2, seed: 22 });
  dir = mkdtempSync(join(tmpdir(), "bsync-people-err-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A folder with a config file that retries nothing (a GET's 500 is otherwise retried) and runs only the members job. */
function workdir(name: string): { cwd: string; env: Record<string, string>; db: string } {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  const db = join(cwd, "snap.db");
  writeFileSync(
    join(cwd, "benefits-sync.config.json"),
    JSON.stringify({
      http: { retry: { maxAttempts: 1 } },
      jobs: {
        "hourly-member-sync": { enabled: true },
        "nightly-claims-export": { enabled: false },
        "daily-groups-designs": { enabled: false },
        "weekly-full-walk": { enabled: false },
        "monthly-reconcile": { enabled: false },
      },
    }),
  );
  return { cwd, db, env: { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db, BENEFITS_PII_KEY: PII } };
}

function expectDescribed(where: string, text: string, status: number): void {
  for (const p of PHI) expect(text, `${where} quotes ${p}`).not.toContain(p);
  expect(text, where).toContain(`GET /v2/members?`);
  expect(text, where).toContain(`answered ${status}`);
  expect(text, where).toContain("2 errors entries");
  expect(text, where).toContain("email");
  expect(text, where).toContain("dependents.0.dateOfBirth");
}

function recordedErrors(db: string): string[] {
  const conn = new BetterSqlite3(db, { readonly: true });
  try {
    return conn.prepare("SELECT error FROM runs WHERE status = 'failed' ORDER BY run_id").pluck().all() as string[];
  } finally {
    conn.close();
  }
}

describe("a people endpoint's error answer is described, never quoted, wherever the run's error goes", () => {
  it.each([400, 500])("sync: the member list answers %i naming a person", async (status) => {
    const w = workdir(`sync-${status}`);
    sb.setFaults({ pathPrefix: "/v2/members", [status === 400 ? "http400" : "http500"]: 1, errorMessage: MESSAGE, errorIssues: ISSUES });
    try {
      const json = await startCli(["sync", "--json"], w.env, w.cwd).done;
      expect(json.code, json.stderr).toBe(1);
      const report = JSON.parse(json.stdout.trim().split("\n").at(-1) ?? "{}") as { status: string; error?: { message: string } };
      expect(report.status).toBe("failed");
      expectDescribed("--json stdout", json.stdout, status);
      expectDescribed("--json error", report.error?.message ?? "", status);
      for (const p of PHI) expect(json.stderr).not.toContain(p);

      const plain = await startCli(["sync"], w.env, w.cwd).done;
      expect(plain.code).toBe(1);
      expectDescribed("stderr", plain.stderr, status);
      for (const p of PHI) expect(plain.stdout).not.toContain(p);

      const errors = recordedErrors(w.db);
      expect(errors).toHaveLength(2);
      for (const e of errors) expectDescribed("runs.error", e, status);
    } finally {
      sb.setFaults({});
    }
  });

  it("schedule: the job.failed log line of the members job", async () => {
    const w = workdir("schedule");
    sb.setFaults({ pathPrefix: "/v2/members", http500: 1, errorMessage: MESSAGE, errorIssues: ISSUES });
    const daemon = startCli(["schedule", "--run-missed"], w.env, w.cwd);
    try {
      // The job never ran, so --run-missed runs it at start.
      let out = "";
      daemon.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
      await new Promise<void>((resolve, reject) => {
        const check = () => {
          if (out.includes('"job.failed"')) resolve();
        };
        daemon.child.stdout!.on("data", check);
        void daemon.done.then((r) => reject(new Error(`schedule exited ${r.code}: ${r.stderr}`)));
        check();
      });
      const line = out.split("\n").find((l) => l.includes('"job.failed"')) ?? "";
      const event = JSON.parse(line) as { job: string; error: { code: string; message: string } };
      expect(event.job).toBe("hourly-member-sync");
      expect(event.error.code).toBe("SERVER_ERROR");
      expectDescribed("job.failed", line, 500);
      for (const p of PHI) expect(out).not.toContain(p);
    } finally {
      daemon.child.kill("SIGTERM");
      const end = await daemon.done;
      sb.setFaults({});
      for (const p of PHI) expect(end.stdout + end.stderr).not.toContain(p);
    }
  });
});
