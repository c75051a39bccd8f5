/**
 * Sinks from the command line and the config file, against the sandbox and a real PostgreSQL:
 * `sync` delivers to `--out DIR --format F`, `--sink URL` and every sink named in the config; one
 * output failing does not hold back another, exits 1 and is caught up by the next run; a password
 * never reaches the output.
 */
import BetterSqlite3 from "better-sqlite3";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitCode } from "../../../src/cli/exit-codes.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { usePostgres } from "../../helpers/pg.js";
import { ALL_CLAIMS } from "../../helpers/sandbox-truth.js";
import { runCli } from "../../unit/cli/run-cli.js";
import { folderFiles, runFolders } from "../../helpers/run-folders.js";
import { snapshotAsOf, warehouse } from "./warehouse-compare.js";
import { runDir } from "../../helpers/run-folders.js";

const pg = usePostgres();
let sb: Sandbox;
let dir: string;
const window = ["--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to];
const lastJson = (out: string) => JSON.parse(out.trim().split("\n").pop()!) as Record<string, unknown>;

beforeAll(async () => {
  sb = await startSandbox({ members: 150, groups: 2, seed: 12 });
  dir = mkdtempSync(join(tmpdir(), "bsync-sinkcli-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("sync's outputs", () => {
  it("config sinks, --sink and --out --format each get every change; a failing warehouse exits 1, hides no password, and is caught up next run", async (ctx) => {
    const url = await pg.freshDatabase(ctx);
    const cwd = mkdtempSync(join(dir, "a-"));
    writeFileSync(
      join(cwd, "benefits-sync.config.json"),
      JSON.stringify({ sinks: { warehouse: { type: "postgres", urlEnv: "WH_URL" }, lake: { type: "folder", dir: "lake", format: "parquet" } } }),
    );
    const base = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(cwd, "snap.db"), BENEFITS_PII_KEY: "sink-cli-test-pii-key-0123456789" };
    // The warehouse is down (a socket directory with no server), with a password in its URL.
    const down = "postgres://etl:s3cr3t-pw@localhost/wh?host=/nonexistent-socket-dir";
    const r1 = await runCli(["sync", ...window, "--json", "--quiet", "--out", "files", "--format", "jsonl"], { env: { ...base, WH_URL: down }, cwd });
    expect(r1.code).toBe(ExitCode.RUN_FAILED);
    const j1 = lastJson(r1.stdout) as { status: string; deliveries: { kind: string; status: string; runs: number[]; output: string }[] };
    expect(j1.status).toBe("succeeded");
    expect(j1.deliveries.map((d) => [d.kind, d.status])).toEqual([["folder", "delivered"], ["postgres", "failed"], ["folder", "delivered"]]);
    expect(r1.stderr).toMatch(/Deltas not delivered to postgres:\/\/etl@\/nonexistent-socket-dir:5432\/wh.*cannot connect to the warehouse/);
    expect(r1.stdout + r1.stderr).not.toContain("s3cr3t-pw");
    expect(existsSync(join(cwd, "files", runDir(1), "members.jsonl"))).toBe(true);
    expect(existsSync(join(cwd, "lake", runDir(1), "members.parquet"))).toBe(true);

    await sb.advance();
    const r2 = await runCli(["sync", ...window, "--json", "--quiet"], { env: { ...base, WH_URL: url }, cwd });
    expect(r2.code, r2.stderr).toBe(ExitCode.OK);
    const j2 = lastJson(r2.stdout) as { runId: number; deliveries: { name?: string; status: string; runs: number[] }[] };
    expect(j2.deliveries.map((d) => [d.name, d.status, d.runs])).toEqual([
      ["warehouse", "delivered", [1, 2]],
      ["lake", "delivered", [2]],
    ]);
    const db = new BetterSqlite3(base.BENEFITS_DB, { readonly: true });
    try {
      const w = await warehouse(pg.query, url);
      expect(w.loads).toEqual([1, 2]);
      const s = snapshotAsOf(db, 2);
      expect(w.current).toEqual(s.current);
      expect(w.history).toEqual(s.history);
    } finally {
      db.close();
    }
    // --sink names a configured sink: it is loaded once, not twice.
    await sb.advance();
    const r3 = await runCli(["sync", ...window, "--json", "--quiet", "--sink", "warehouse"], { env: { ...base, WH_URL: url }, cwd });
    expect(r3.code, r3.stderr).toBe(ExitCode.OK);
    expect((lastJson(r3.stdout) as { deliveries: unknown[] }).deliveries).toHaveLength(2);
    expect((await warehouse(pg.query, url)).loads).toEqual([1, 2, 3]);
    const manifest = JSON.parse(readFileSync(join(cwd, "lake", runDir(3), "manifest.json"), "utf8")) as { format: string; runs: number[] };
    expect(manifest).toMatchObject({ format: "parquet", runs: [3] });
  });

  it("the nightly claims export recipe: the first night on an existing snapshot, a failed delivery night, the night after: folders 00000001/ ... 0000000N/, each equal to export --run N", async () => {
    const cwd = mkdtempSync(join(dir, "c-"));
    const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(cwd, "snap.db"), BENEFITS_PII_KEY: "recipe-test-pii-key-0123456789" };
    // The recipe's command line, as printed (the window pinned for the sandbox's data).
    const night = () => runCli(["sync", "--resources", "groups,claims", ...window, "--out", "claims-deltas", "--json", "--quiet"], { env, cwd });
    // An existing snapshot: a run made before the recipe was set up.
    expect((await runCli(["sync", "--resources", "groups,claims", ...window, "--quiet"], { env, cwd })).code).toBe(ExitCode.OK);
    await sb.advance();
    const first = await night();
    expect(first.code, first.stderr).toBe(ExitCode.OK);
    expect(runFolders(join(cwd, "claims-deltas"))).toEqual([1, 2]);
    // A night whose delivery fails (the directory is not there as one): exit 1, no folder.
    await sb.advance();
    renameSync(join(cwd, "claims-deltas"), join(cwd, "claims-deltas.away"));
    writeFileSync(join(cwd, "claims-deltas"), "");
    const failed = await night();
    expect(failed.code).toBe(ExitCode.RUN_FAILED);
    rmSync(join(cwd, "claims-deltas"));
    renameSync(join(cwd, "claims-deltas.away"), join(cwd, "claims-deltas"));
    await sb.advance();
    const after = await night();
    expect(after.code, after.stderr).toBe(ExitCode.OK);
    expect((lastJson(after.stdout) as { delivery: { runs: number[] } }).delivery.runs).toEqual([3, 4]);
    expect(runFolders(join(cwd, "claims-deltas"))).toEqual([1, 2, 3, 4]);
    const db = new BetterSqlite3(env.BENEFITS_DB, { readonly: true });
    try {
      for (const run of [1, 2, 3, 4]) {
        const folder = join(cwd, "claims-deltas", runDir(run));
        const manifest = JSON.parse(readFileSync(join(folder, "manifest.json"), "utf8")) as { runs: number[]; files: { file: string; rows: number }[] };
        expect(manifest.runs).toEqual([run]);
        const claims = db.prepare("SELECT COUNT(*) FROM changes WHERE run_id = ? AND resource = 'claims'").pluck().get(run) as number;
        expect(manifest.files.find((f) => f.file === "claims.csv")?.rows).toBe(claims);
        expect(manifest.files.find((f) => f.file === "members.csv")?.rows).toBe(0); // not walked: header only
        const e = await runCli(["export", "--run", String(run), "--out", "resend", "--quiet"], { env, cwd });
        expect(e.code, e.stderr).toBe(ExitCode.OK);
        expect(folderFiles(folder)).toEqual(folderFiles(join(cwd, "resend", runDir(run))));
      }
      expect(db.prepare("SELECT COUNT(*) FROM changes WHERE run_id = 1 AND resource = 'claims'").pluck().get() as number).toBeGreaterThan(100);
    } finally {
      db.close();
    }
  });

  it("bad sink settings are a usage error that changes nothing: an unset urlEnv, a misspelt key, --format without --out", async () => {
    const cwd = mkdtempSync(join(dir, "b-"));
    const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(cwd, "snap.db") };
    writeFileSync(join(cwd, "benefits-sync.config.json"), JSON.stringify({ sinks: { wh: { type: "postgres", urlEnv: "NOT_SET_ANYWHERE" } } }));
    const unset = await runCli(["sync", ...window, "--quiet"], { env, cwd });
    expect(unset.code).toBe(ExitCode.USAGE);
    expect(unset.stderr).toMatch(/sinks\.wh\.urlEnv: the environment variable NOT_SET_ANYWHERE is not set/);
    writeFileSync(join(cwd, "benefits-sync.config.json"), JSON.stringify({ sinks: { wh: { type: "postgres", ulr: "postgres://x@y/z" } } }));
    const typo = await runCli(["sync", ...window, "--quiet"], { env, cwd });
    expect(typo.code).toBe(ExitCode.USAGE);
    expect(typo.stderr).toMatch(/sinks/);
    rmSync(join(cwd, "benefits-sync.config.json"));
    const fmt = await runCli(["sync", ...window, "--quiet", "--format", "parquet"], { env, cwd });
    expect(fmt.code).toBe(ExitCode.USAGE);
    expect(fmt.stderr).toMatch(/--format.*--out/);
    expect(existsSync(join(cwd, "snap.db"))).toBe(false);
  });
});
