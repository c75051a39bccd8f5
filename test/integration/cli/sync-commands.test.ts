import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import BetterSqlite3 from "better-sqlite3";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitCode } from "../../../src/cli/exit-codes.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { runCli } from "../../unit/cli/run-cli.js";
import { ALL_CLAIMS } from "../../helpers/sandbox-truth.js";
import { runDir } from "../../helpers/run-folders.js";

let sb: Sandbox;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  sb = await startSandbox({ members: 400, groups: 2, seed: 3 });
  dir = mkdtempSync(join(tmpdir(), "bsync-cli-"));
  env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(dir, "snap.db"), BENEFITS_PII_KEY: "cli-test-pii-key-0123456789" };
});
afterAll(async () => {
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

const window = ["--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to];
const lastJson = (out: string) => JSON.parse(out.trim().split("\n").pop()!) as Record<string, unknown>;

describe("benefits-sync sync / runs / demo", () => {
  it("sync --json prints the contract's report as the last line; runs lists the run; a re-run changes nothing", async () => {
    const r = await runCli(["sync", ...window, "--json"], { env, cwd: dir });
    expect(r.code).toBe(ExitCode.OK);
    const report = lastJson(r.stdout);
    expect(report).toMatchObject({ runId: 1, status: "succeeded" });
    const members = (report.resources as Record<string, Record<string, number>>).members!;
    expect(Object.keys(members).sort()).toEqual(["deleted", "inserted", "quarantined", "seen", "unchanged", "updated"]);
    expect(members.inserted).toBeGreaterThan(300);
    expect(statSync(env.BENEFITS_DB!).mode & 0o777).toBe(0o600);
    // Progress goes to stderr as JSON lines when not on a terminal.
    expect(r.stderr).toMatch(/"event":"walked","resource":"members"/);

    const again = await runCli(["sync", ...window, "--json", "--quiet", "--out", join(dir, "deltas")], { env, cwd: dir });
    expect(lastJson(again.stdout)).toMatchObject({ runId: 2, status: "succeeded", deltas: join(dir, "deltas", runDir(2)) });
    // The first delivery to this output writes every run it has not received, each its own folder:
    // run 1's inserts in 1/, run 2's nothing in 2/. Every file is there, header only when nothing changed.
    const manifestOf = (run: number) => JSON.parse(readFileSync(join(dir, "deltas", runDir(run), "manifest.json"), "utf8")) as { runs: number[]; files: { file: string; rows: number }[] };
    const manifest = manifestOf(1);
    expect(manifest.runs).toEqual([1]);
    expect(manifest.files.map((f) => f.file).sort()).toEqual(["claim_lines.csv", "claims.csv", "coverages.csv", "designs.csv", "groups.csv", "members.csv", "plans.csv"]);
    expect(manifest.files.find((f) => f.file === "members.csv")!.rows).toBe(members.inserted);
    expect(manifestOf(2)).toMatchObject({ runs: [2] });
    expect(manifestOf(2).files.every((f) => f.rows === 0)).toBe(true);
    expect(((lastJson(again.stdout).resources as Record<string, Record<string, number>>).members!).inserted).toBe(0);

    const runs = await runCli(["runs", "--json"], { env, cwd: dir });
    expect(runs.code).toBe(ExitCode.OK);
    const rows = JSON.parse(runs.stdout) as { run_id: number; status: string }[];
    expect(rows.map((x) => [x.run_id, x.status])).toEqual([
      [2, "succeeded"],
      [1, "succeeded"],
    ]);
    const table = await runCli(["runs"], { env, cwd: dir });
    expect(table.stdout).toMatch(/^run_id\s+job\s+status/m);
  });

  it("a dry run reports what it would change and records nothing", async () => {
    const before = await runCli(["runs", "--json"], { env, cwd: dir });
    await sb.advance();
    const dry = await runCli(["sync", ...window, "--dry-run", "--json", "--quiet"], { env, cwd: dir });
    expect(dry.code).toBe(ExitCode.OK);
    const report = lastJson(dry.stdout);
    expect(report.dryRun).toBe(true);
    const changed = Object.values(report.resources as Record<string, Record<string, number>>).reduce((n, c) => n + c.inserted! + c.updated! + c.deleted!, 0);
    expect(changed).toBeGreaterThan(0);
    const after = await runCli(["runs", "--json"], { env, cwd: dir });
    expect(after.stdout).toBe(before.stdout);
  });

  it("bad usage exits 2 and changes nothing", async () => {
    const bad = await runCli(["sync", "--resources", "members,widgets"], { env, cwd: dir });
    expect(bad.code).toBe(ExitCode.USAGE);
    expect(bad.stderr).toContain('unknown "widgets"');
    const backwards = await runCli(["sync", "--claims-since", "2026-02-01", "--claims-until", "2026-01-01"], { env, cwd: dir });
    expect(backwards.code).toBe(ExitCode.USAGE);
    expect(backwards.stderr).toContain("is after");
    const noDb = await runCli(["runs"], { env: { ...env, BENEFITS_DB: join(dir, "missing.db") }, cwd: dir });
    expect(noDb.code).toBe(ExitCode.USAGE);
    expect(noDb.stderr).toContain("no snapshot at");
    expect(existsSync(join(dir, "missing.db"))).toBe(false);
  });

  it("a run that cannot reach the service exits 1, is recorded failed, and never prints the key", async () => {
    const down = { ...env, BENEFITS_BASE_URL: "http://127.0.0.1:9", BENEFITS_DB: join(dir, "down.db") };
    const r = await runCli(["sync", ...window, "--json", "--quiet", "--config", join(dir, "none.json")], { env: down, cwd: dir });
    // --config pointing nowhere is a usage error: first prove that, then run without it.
    expect(r.code).toBe(ExitCode.USAGE);
    const failed = await runCli(["sync", ...window, "--json", "--quiet", "--out", join(dir, "down-deltas")], { env: { ...down }, cwd: dir });
    expect(failed.code).toBe(ExitCode.RUN_FAILED);
    // A failed run delivers nothing: its committed changes ride with the next successful delivery.
    expect(existsSync(join(dir, "down-deltas"))).toBe(false);
    expect(lastJson(failed.stdout).delivery).toBeUndefined();
    const report = lastJson(failed.stdout);
    expect(report.status).toBe("failed");
    expect((report.error as { code: string }).code).toBe("TRANSPORT");
    expect(failed.stdout + failed.stderr).not.toContain(env.BENEFITS_API_KEY);
    const runs = await runCli(["runs", "--json"], { env: down, cwd: dir });
    expect((JSON.parse(runs.stdout) as { status: string }[])[0]!.status).toBe("failed");
  });

  it("sync --out: a failed delivery exits 1 and keeps the run succeeded; the next sync --out to that directory carries its changes", async () => {
    const e = { ...env, BENEFITS_DB: join(dir, "deliver.db") };
    const blocked = join(dir, "blocked");
    writeFileSync(blocked, "a file where a directory should be");
    const out = join(blocked, "deltas");
    const first = await runCli(["sync", ...window, "--json", "--quiet", "--out", out], { env: e, cwd: dir });
    expect(first.code).toBe(ExitCode.RUN_FAILED);
    expect(lastJson(first.stdout)).toMatchObject({ runId: 1, status: "succeeded", delivery: { status: "failed", runs: [1] } });
    expect(first.stderr).toContain(blocked);
    expect(first.stderr).toMatch(/is a file, not a directory/);
    expect(first.stderr).toMatch(/Fix: /);
    expect(first.stderr).not.toMatch(/ENOTDIR|EEXIST|ENOENT/);
    const runs = await runCli(["runs", "--json"], { env: e, cwd: dir });
    expect((JSON.parse(runs.stdout) as { status: string }[])[0]!.status).toBe("succeeded");

    await sb.advance();
    const second = await runCli(["sync", ...window, "--quiet", "--out", out], { env: e, cwd: dir });
    expect(second.code).toBe(ExitCode.RUN_FAILED);
    expect(second.stderr).toMatch(/not delivered/);
    expect(second.stderr).toMatch(/runs 1, 2/);

    rmSync(blocked);
    mkdirSync(blocked);
    // A relative --out is the same output: it resolves against the working directory.
    const third = await runCli(["sync", ...window, "--json", "--quiet", "--out", join("blocked", "deltas")], { env: e, cwd: dir });
    expect(third.stderr).toBe("");
    expect(third.code).toBe(ExitCode.OK);
    expect(lastJson(third.stdout)).toMatchObject({ runId: 3, delivery: { status: "delivered", runs: [1, 2, 3] }, deltas: join(out, runDir(3)) });
    // One folder per run: together they hold every recorded change once.
    const manifests = [1, 2, 3].map((r) => JSON.parse(readFileSync(join(out, runDir(r), "manifest.json"), "utf8")) as { runs: number[]; files: { file: string; rows: number }[] });
    expect(manifests.map((m) => m.runs)).toEqual([[1], [2], [3]]);
    const db = new BetterSqlite3(e.BENEFITS_DB, { readonly: true });
    try {
      for (const f of manifests[0]!.files.filter((x) => x.file !== "claim_lines.csv")) {
        const recorded = db.prepare("SELECT COUNT(*) FROM changes WHERE resource = ?").pluck().get(f.file.replace(".csv", ""));
        const rows = manifests.reduce((n, m) => n + m.files.find((x) => x.file === f.file)!.rows, 0);
        expect([f.file, rows]).toEqual([f.file, recorded]);
      }
      expect(db.prepare("SELECT status FROM deliveries ORDER BY delivery_id").pluck().all()).toEqual(["failed", "failed", "delivered", "delivered", "delivered"]);
    } finally {
      db.close();
    }
    const human = await runCli(["sync", ...window, "--out", out], { env: e, cwd: dir });
    expect(human.code).toBe(ExitCode.OK);
    expect(human.stdout).toContain(`Deltas: ${join(out, runDir(4))}`);
    // --quiet prints nothing when all went well (cron mails whatever a job prints).
    const quiet = await runCli(["sync", ...window, "--quiet", "--out", out], { env: e, cwd: dir });
    expect([quiet.code, quiet.stdout, quiet.stderr]).toEqual([ExitCode.OK, "", ""]);
  });

  it("demo runs the whole story and writes the run's deltas with a manifest that matches the files", async () => {
    const out = join(dir, "demo");
    const r = await runCli(["demo", "--members", "300", "--out", out, "--quiet"], { env: {}, cwd: dir });
    expect(r.code).toBe(ExitCode.OK);
    expect(r.stdout).toContain("equal the sandbox's own record of the day, exactly");
    // A second day told by the sandbox's webhooks and applied by the worker alone.
    expect(r.stdout).toMatch(/Webhooks, simulated day \S+: the sandbox sent \d+ events for \d+ members .*applied them as run 3 /);
    expect(r.stdout).toContain("The members in the snapshot match the sandbox without a full walk");
    const manifest = JSON.parse(readFileSync(join(out, "deltas", runDir(2), "manifest.json"), "utf8")) as { files: { file: string; rows: number; sha256: string }[] };
    expect(manifest.files.length).toBeGreaterThan(1);
    for (const f of manifest.files) {
      const text = readFileSync(join(out, "deltas", runDir(2), f.file));
      expect(createHash("sha256").update(text).digest("hex")).toBe(f.sha256);
      expect(text.toString("utf8").trimEnd().split("\r\n").length - 1).toBeGreaterThanOrEqual(f.rows);
      expect(text.toString("utf8").split("\r\n")[0]).toMatch(/^op,run_id,/);
    }
    // It ends with the reconciliation of its two runs: the page's path on the last line.
    const last = r.stdout.trimEnd().split("\n").pop()!;
    expect(last).toBe(`Report: ${join("demo", "report", "report.html")}`);
    expect(readFileSync(join(dir, "demo", "report", "report.html"), "utf8")).toContain("<svg");
    const report = JSON.parse(readFileSync(join(out, "report", "report.json"), "utf8")) as { from: { runId: number }; to: { runId: number }; arithmeticHolds: boolean; findings: Record<string, number> };
    expect([report.from.runId, report.to.runId, report.arithmeticHolds]).toEqual([1, 2, true]);
    expect(report.findings.overlapping_coverages).toBeGreaterThanOrEqual(1);
    // Run again in the same folder, as a newcomer does: it starts over, its deltas folder included
    // (the folder belonged to the snapshot it removed; before, the second demo exited 2 there).
    const again = await runCli(["demo", "--members", "300", "--out", out, "--quiet"], { env: {}, cwd: dir });
    expect(again.code, again.stderr).toBe(ExitCode.OK);
    expect(readdirSync(join(out, "deltas"))).toEqual([runDir(2)]);
  });
});
