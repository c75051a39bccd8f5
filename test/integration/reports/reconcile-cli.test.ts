/**
 * `benefits-sync reconcile` as users meet it: periods given by run id or date, a failed run among
 * the succeeded ones (refused as a period, and a period spanning it still adds up), a sync holding
 * the write lock meanwhile, bad input that changes nothing, an output folder that cannot take the
 * files, and a snapshot whose history does not add up (exit 1, the page says so).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitCode } from "../../../src/cli/exit-codes.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { copyVersionRow } from "../../helpers/hand-run.js";
import { ALL_CLAIMS } from "../../helpers/sandbox-truth.js";
import { runCli } from "../../unit/cli/run-cli.js";
import { reconcile } from "../../../src/reports/reconcile.js";
import { openDatabase } from "../../../src/store/file/database.js";
import { UsageError } from "../../../src/input-errors.js";

let sb: Sandbox;
let dir: string;
let env: Record<string, string>;
const window = ["--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to, "--quiet"];
/** A copy of the test's snapshot under `name`, to damage without touching the original. */
function copyOfSnapshot(name: string): string {
  const path = join(dir, name);
  const source = new BetterSqlite3(env.BENEFITS_DB!, { readonly: true });
  source.exec(`VACUUM INTO '${path}'`);
  source.close();
  return path;
}
/**
 * A corrupt history: the version `vid` of a resource given a second current version, as if run 3
 * had written one without closing the old; `set` gives the new version's columns (SQL).
 */
function secondCurrentVersion(db: BetterSqlite3.Database, resource: string, vid: number, set: Record<string, string>): void {
  copyVersionRow(db, resource, vid, set);
}
const lastJson = (out: string): Record<string, any> => JSON.parse(out.trim().split("\n").pop()!) as Record<string, any>;

beforeAll(async () => {
  sb = await startSandbox({ members: 600, seed: 31, inconsistencies: true });
  dir = mkdtempSync(join(tmpdir(), "bsync-reconcile-cli-"));
  env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(dir, "snap.db"), BENEFITS_PII_KEY: "reconcile-cli-pii-key-0123456789" };
  writeFileSync(join(dir, "once.json"), JSON.stringify({ http: { retry: { maxAttempts: 1 } } }));
  // Run 1 succeeds; a day; run 2 fails halfway through the members (after committing pages); run 3 resumes and succeeds.
  expect((await runCli(["sync", ...window], { env, cwd: dir })).code).toBe(ExitCode.OK);
  await sb.advance();
  sb.setFaults({ pathPrefix: "/v2/members", afterRequests: 2, http503: 1 });
  expect((await runCli(["sync", ...window, "--config", join(dir, "once.json")], { env, cwd: dir })).code).toBe(ExitCode.RUN_FAILED);
  sb.setFaults({});
  expect((await runCli(["sync", ...window], { env, cwd: dir })).code).toBe(ExitCode.OK);
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("benefits-sync reconcile", () => {
  it("--json prints the contract's figures; a period spanning a failed run adds up", async () => {
    const r = await runCli(["reconcile", "--from", "1", "--to", "3", "--out", "r13", "--json", "--as-of", sb.today], { env, cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(ExitCode.OK);
    const j = lastJson(r.stdout);
    expect(j.from.runId).toBe(1);
    expect(j.to.runId).toBe(3);
    expect(typeof j.members.from).toBe("number");
    expect(j.members.to).toBe([...sb.iterate("members")].length);
    expect(j.claims.to.count).toBe([...sb.iterate("claims")].length);
    for (const k of ["from", "to"]) expect(j.claims[k].paid).toMatch(/^-?\d+\.\d{2}$/);
    expect(j.arithmeticHolds).toBe(true);
    expect(Object.keys(j.findings).sort()).toEqual(
      ["claim_amount_not_decimal", "claim_member_not_covered_in_group", "claim_outside_coverage", "coverage_plan_not_in_group", "member_of_terminated_group", "overlapping_coverages"],
    );
    expect(readdirSync(join(dir, "r13")).sort()).toEqual(
      ["claim-transitions.csv", "claims.csv", "eligibility-audit.csv", "eligibility-changes.csv", "findings.csv", "manifest.json", "membership.csv", "report.html", "report.json", "summary.md"],
    );
  });

  it("tells each part as it begins (the CLI draws it on a terminal), and nothing when not asked", async () => {
    const phases: string[] = [];
    const db = openDatabase(env.BENEFITS_DB!, { readonly: true });
    try {
      reconcile(db, { from: "1", to: "3", outDir: join(dir, "phases"), onPhase: (p) => phases.push(p) });
    } finally {
      db.close();
    }
    expect(phases).toEqual(["membership and its movement", "the 030 audit of coverage as of B", "claims", "consistency checks", "summary and page"]);
    const piped = await runCli(["reconcile", "--from", "1", "--to", "3", "--out", "phases"], { env, cwd: dir });
    expect([piped.code, piped.stderr]).toEqual([ExitCode.OK, ""]);
  });

  it("a date means the last successful run that started on or before it", async () => {
    const today = new Date().toISOString().slice(0, 10);
    const r = await runCli(["reconcile", "--from", "2000-01-01", "--to", today, "--out", "bydate", "--json"], { env, cwd: dir });
    expect(r.code).toBe(ExitCode.USAGE);
    expect(r.stderr).toMatch(/--from 2000-01-01: no run succeeded on or before 2000-01-01 \(UTC\); the first successful run started at \d{4}-/);
    const ok = await runCli(["reconcile", "--from", "1", "--to", today, "--out", "bydate", "--json"], { env, cwd: dir });
    expect(ok.code).toBe(ExitCode.OK);
    expect(lastJson(ok.stdout).to.runId).toBe(3);
  });

  it("bad input exits 2, names the problem and writes nothing", async () => {
    const cases: [string[], RegExp][] = [
      [["--from", "2", "--to", "3"], /--from 2: run 2 failed; its walk is partial/],
      [["--from", "9", "--to", "3"], /--from 9: there is no run 9 in this snapshot/],
      [["--from", "3", "--to", "1"], /--from resolves to run 3, later than --to's run 1/],
      [["--from", "last week", "--to", "3"], /option '--from <run-or-date>' argument 'last week' is invalid\. expected a run id \(e\.g\. 7\) or a date YYYY-MM-DD/],
      // Days that look like dates but name none: refused as usage, never "Invalid time value" and exit 1.
      [["--from", "2026-13-01", "--to", "3"], /option '--from <run-or-date>' argument '2026-13-01' is invalid\. expected a run id \(e\.g\. 7\) or a date YYYY-MM-DD/],
      [["--from", "1", "--to", "2026-00-10"], /option '--to <run-or-date>' argument '2026-00-10' is invalid/],
      [["--from", "1", "--to", "2026-12-32"], /option '--to <run-or-date>' argument '2026-12-32' is invalid/],
      [["--from", "1"], /--to: the later period is required/],
      [["--from", "1", "--to", "3", "--as-of", "2026-02-30"], /expected a date YYYY-MM-DD/],
    ];
    for (const [args, message] of cases) {
      const out = join(dir, "never");
      const r = await runCli(["reconcile", ...args, ...(args.includes("--to") ? ["--out", out] : [])], { env, cwd: dir });
      expect(r.code, args.join(" ")).toBe(ExitCode.USAGE);
      expect(r.stderr, args.join(" ")).toMatch(message);
      expect(existsSync(out), args.join(" ")).toBe(false);
    }
  });

  it("the library's reconcile() refuses a day that does not exist as usage, writing nothing", () => {
    const db = openDatabase(env.BENEFITS_DB!, { readonly: true });
    try {
      for (const day of ["2026-13-01", "2026-00-10", "2026-12-32"]) {
        const out = join(dir, `lib-${day}`);
        expect(() => reconcile(db, { from: day, to: "3", outDir: out })).toThrow(UsageError);
        expect(() => reconcile(db, { from: day, to: "3", outDir: out })).toThrow(`--from ${day}: not a calendar day`);
        expect(existsSync(out)).toBe(false);
      }
    } finally {
      db.close();
    }
  });

  it("a snapshot of an older schema is refused with what to do, and nothing is written", async () => {
    const old = copyOfSnapshot("old.db");
    const db = new BetterSqlite3(old);
    const latest = db.pragma("user_version", { simple: true }) as number;
    db.pragma(`user_version = ${latest - 1}`);
    db.close();
    const refused = await runCli(["reconcile", "--from", "1", "--to", "3", "--out", "old"], { env: { ...env, BENEFITS_DB: old }, cwd: dir });
    expect(refused.code).toBe(ExitCode.USAGE);
    expect(refused.stderr).toContain(`was made by an older benefits-sync (schema ${latest - 1}; this one reads ${latest}) and a read-only command does not convert it: run \`benefits-sync sync\``);
    expect(existsSync(join(dir, "old"))).toBe(false);
  });

  it("reads while a sync holds the write lock: the report sees the snapshot as it was", async () => {
    const writer = new BetterSqlite3(env.BENEFITS_DB!);
    try {
      writer.exec("BEGIN IMMEDIATE");
      writer.prepare("UPDATE _runs SET job = job WHERE run_id = 1").run();
      const r = await runCli(["reconcile", "--from", "1", "--to", "3", "--out", "locked", "--json"], { env, cwd: dir });
      expect(r.code).toBe(ExitCode.OK);
      expect(lastJson(r.stdout).arithmeticHolds).toBe(true);
    } finally {
      writer.exec("ROLLBACK");
      writer.close();
    }
  });

  it("an output folder that cannot take a file: exit 1, nothing moved in, no staging left", async () => {
    const out = join(dir, "blocked");
    mkdirSync(join(out, "report.html"), { recursive: true });
    writeFileSync(join(out, "summary.md"), "an earlier summary");
    const r = await runCli(["reconcile", "--from", "1", "--to", "3", "--out", out], { env, cwd: dir });
    expect(r.code).toBe(ExitCode.RUN_FAILED);
    expect(r.stderr).toMatch(/report\.html.*it exists and is not a file.*move it away/s);
    expect(r.stderr).toContain(`cannot write the report to ${out}`);
    expect(r.stderr).not.toContain("deltas");
    expect(readdirSync(out).sort()).toEqual(["report.html", "summary.md"]);
    expect(readFileSync(join(out, "summary.md"), "utf8")).toBe("an earlier summary");
  });

  it("creates its output folder with every missing parent", async () => {
    const r = await runCli(["reconcile", "--from", "1", "--to", "3", "--out", join("new", "monthly", "2026-03")], { env, cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(ExitCode.OK);
    expect(readdirSync(join(dir, "new", "monthly", "2026-03"))).toContain("report.html");
  });

  it("an --out below a file: exit 1, the error speaks of the report and names the file", async () => {
    writeFileSync(join(dir, "plain-file"), "not a folder");
    const r = await runCli(["reconcile", "--from", "1", "--to", "3", "--out", join("plain-file", "rep")], { env, cwd: dir });
    expect(r.code).toBe(ExitCode.RUN_FAILED);
    expect(r.stderr).toContain(`cannot write the report to ${join(dir, "plain-file", "rep")}: ${join(dir, "plain-file")} is a file, not a directory`);
    expect(r.stderr).not.toContain("deltas");
    expect(readFileSync(join(dir, "plain-file"), "utf8")).toBe("not a folder");
  });

  it("its summary on the terminal writes counts and money with thousands separators, as the page does", async () => {
    const r = await runCli(["reconcile", "--from", "1", "--to", "3", "--out", "human"], { env, cwd: dir });
    expect(r.code).toBe(ExitCode.OK);
    const saved = JSON.parse(readFileSync(join(dir, "human", "report.json"), "utf8")) as { claims: Record<"from" | "to", { count: number; paid: string }> };
    const sep = (s: string) => s.replace(/^(-?\d+)/, (w) => w.replace(/\B(?=(\d{3})+$)/g, ","));
    expect(Number(saved.claims.to.paid)).toBeGreaterThan(1000);
    const { from, to } = saved.claims;
    expect(r.stdout).toContain(`  claims     ${sep(String(from.count))} -> ${sep(String(to.count))}; paid ${sep(from.paid)} -> ${sep(to.paid)}\n`);
  });

  it("a history that does not add up exits 1 and says so in every output", async () => {
    // A copy of the snapshot with one coverage given a second current version by run 3 (a corrupt history).
    const broken = copyOfSnapshot("broken.db");
    const db = new BetterSqlite3(broken);
    const victim = db.prepare("SELECT vid FROM _coverages_v WHERE valid_from_run = 1 AND valid_to_run IS NULL AND status = 'active' LIMIT 1").pluck().get() as number;
    secondCurrentVersion(db, "coverages", victim, { valid_from_run: "3", status: "'pending'", hash: "'corrupt'" });
    db.close();
    const r = await runCli(["reconcile", "--from", "1", "--to", "3", "--out", "broken", "--json"], { env: { ...env, BENEFITS_DB: broken }, cwd: dir });
    expect(r.code).toBe(ExitCode.RUN_FAILED);
    expect(r.stderr).toMatch(/the arithmetic does not hold: coverages: .* 1 cell\(s\) do not/);
    expect(lastJson(r.stdout).arithmeticHolds).toBe(false);
    expect(readFileSync(join(dir, "broken", "report.html"), "utf8")).toContain("THE ARITHMETIC DOES NOT HOLD");
    expect(readFileSync(join(dir, "broken", "summary.md"), "utf8")).toContain("THE ARITHMETIC DOES NOT HOLD");
    expect(readFileSync(join(dir, "broken", "membership.csv"), "utf8")).toMatch(/,NO\r\n/);
  });
  /** Reconcile a copy of the snapshot damaged by `damage`: the command's result and every file it wrote. */
  async function reconcileDamaged(name: string, damage: (db: BetterSqlite3.Database) => void) {
    const broken = copyOfSnapshot(`${name}.db`);
    const db = new BetterSqlite3(broken);
    damage(db);
    db.close();
    const r = await runCli(["reconcile", "--from", "1", "--to", "3", "--out", name, "--json"], { env: { ...env, BENEFITS_DB: broken }, cwd: dir });
    const file = (f: string) => readFileSync(join(dir, name, f), "utf8");
    return { r, json: lastJson(r.stdout), file, saved: JSON.parse(file("report.json")) as Record<string, any> };
  }

  it("one claim's billed amount changed by a version that did not close the old one: the claims arithmetic does not hold, though the paid total does", async () => {
    // A claim paid nothing (so that the paid total still adds up and only the per-status check can see it).
    let status = "";
    const { r, json, file, saved } = await reconcileDamaged("broken-claim", (db) => {
      const victim = db.prepare("SELECT vid, claimStatus FROM _claims_v WHERE valid_from_run = 1 AND valid_to_run IS NULL AND paidAmount_cents = 0 ORDER BY vid LIMIT 1").get() as { vid: number; claimStatus: string };
      status = victim.claimStatus;
      secondCurrentVersion(db, "claims", victim.vid, { valid_from_run: "3", claimAmount_cents: '"claimAmount_cents" + 100', hash: "'corrupt'" });
    });
    expect(r.code).toBe(ExitCode.RUN_FAILED);
    expect(r.stderr).toContain(`the arithmetic does not hold: claims ${status}: at A − what left + what came = at B`);
    expect(r.stderr).not.toMatch(/does not hold: (members|coverages)/);
    for (const out of [json, saved]) {
      expect(out.arithmeticHolds).toBe(false);
      expect(out.claims.holds).toBe(false);
      expect(out.claims.arithmetic).toContainEqual({ status, holds: false });
      // The paid total itself adds up: the damage is seen by the per-status check alone.
      expect(Math.round(Number(out.claims.from.paid) * 100) + Math.round(Number(out.claims.paidMovement.total) * 100)).toBe(Math.round(Number(out.claims.to.paid) * 100));
      expect(out.members.holds).toBe(true);
    }
    for (const f of ["report.html", "summary.md"]) expect(file(f), f).toContain("THE ARITHMETIC DOES NOT HOLD");
    expect(file("summary.md")).toContain(`✗ DOES NOT HOLD: claims ${status}:`);
    expect(file("report.html")).toContain(`✗ does not hold: claims ${status}:`);
    // claims.csv: every row of that status says NO, and no row of another status does.
    const rows = file("claims.csv").trim().split("\r\n").map((l) => l.split(","));
    const [head, ...body] = rows;
    expect(head!.at(-1)).toBe("status_adds_up");
    const verdicts = body.map((c) => [c[1], c.at(-1)]);
    expect(verdicts.filter(([s]) => s === status).every(([, v]) => v === "NO")).toBe(true);
    expect(verdicts.some(([s]) => s === status)).toBe(true);
    expect(verdicts.filter(([s]) => s !== status).every(([, v]) => v === "yes")).toBe(true);
  });

  it("one member counted twice at B (a second current version): the members arithmetic does not hold", async () => {
    const { r, json, file, saved } = await reconcileDamaged("broken-member", (db) => {
      const victim = db.prepare("SELECT vid FROM _members_v WHERE valid_from_run = 1 AND valid_to_run IS NULL ORDER BY vid LIMIT 1").pluck().get() as number;
      secondCurrentVersion(db, "members", victim, { valid_from_run: "3", hash: "'corrupt'" });
    });
    expect(r.code).toBe(ExitCode.RUN_FAILED);
    const m = json.members as { from: number; to: number; added: number; deleted: number };
    expect(m.to).toBe(m.from + m.added - m.deleted + 1);
    expect(r.stderr).toContain(`the arithmetic does not hold: members: ${m.from.toLocaleString("en-US")} at A`);
    expect(r.stderr).not.toMatch(/does not hold: (claims|coverages)/);
    for (const out of [json, saved]) {
      expect(out.arithmeticHolds).toBe(false);
      expect(out.members.holds).toBe(false);
      expect(out.claims.holds).toBe(true);
    }
    for (const f of ["report.html", "summary.md"]) expect(file(f), f).toContain("THE ARITHMETIC DOES NOT HOLD");
    expect(file("summary.md")).toContain("✗ DOES NOT HOLD: members:");
    expect(file("membership.csv")).not.toContain(",NO\r\n");
    expect(file("claims.csv")).not.toContain(",NO\r\n");
  });
});
