/**
 * One output, one snapshot (issue 37), with the built CLI against the sandbox: a folder (or a
 * warehouse) that received snapshot A's runs refuses snapshot B's, since run ids start at 1 in
 * every snapshot: `sync --out`, a configured folder sink, `export --out` and a warehouse all exit 2
 * naming both snapshots, and change nothing in the output; A keeps delivering there.
 */
import BetterSqlite3 from "better-sqlite3";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { usePostgres } from "../helpers/pg.js";
import { runDir, runFolders, treeHash } from "../helpers/run-folders.js";
import { ALL_CLAIMS } from "../helpers/sandbox-truth.js";

const pg = usePostgres();
let sb: Sandbox;
let dir: string;
/** An id as messages print it: a run of exactly nine digits in it is masked like an SSN, by the PHI rule every message goes through. */
const shown = (id: string): string => id.replace(/(?<!\d)\d{9}(?!\d)/g, "[ssn]");
const window = ["--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to];

beforeAll(async () => {
  sb = await startSandbox({ members: 60, groups: 2, seed: 37 });
  dir = mkdtempSync(join(tmpdir(), "bsync-one-snapshot-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function setup(name: string) {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_PII_KEY: "one-snapshot-test-pii-key-0123456789" };
  const cli = async (args: string[], at = cwd, extra: Record<string, string> = {}) => {
    const r = await startCli(args, { ...env, ...extra }, at).done;
    return { ...r, code: r.code ?? -1 };
  };
  const sync = (db: string, ...extra: string[]) => cli(["sync", "--db", join(cwd, db), ...window, "--quiet", ...extra]);
  /** The snapshot's id, read from its file, as messages print it ({@link shown}). */
  const idOf = (db: string): string => {
    const h = new BetterSqlite3(join(cwd, db), { readonly: true });
    try {
      return shown(h.prepare("SELECT value FROM _meta WHERE key = 'snapshot_id'").pluck().get() as string);
    } finally {
      h.close();
    }
  };
  const runsOf = (db: string): number => {
    const h = new BetterSqlite3(join(cwd, db), { readonly: true });
    try {
      return h.prepare("SELECT COUNT(*) FROM _runs").pluck().get() as number;
    } finally {
      h.close();
    }
  };
  return { cwd, cli, sync, idOf, runsOf };
}

describe("an output belongs to the snapshot that first delivered to it", () => {
  it("sync --out, a configured folder sink and export --out from another snapshot exit 2 naming both ids, and leave the folder byte for byte as it was; the first snapshot keeps delivering", async () => {
    const t = setup("folder");
    const X = join(t.cwd, "X");
    const a1 = await t.sync("a.db", "--out", X);
    expect(a1.code, a1.stderr).toBe(0);
    const b1 = await t.sync("b.db");
    expect(b1.code, b1.stderr).toBe(0);
    const [a, b] = [t.idOf("a.db"), t.idOf("b.db")];
    expect(a).not.toBe(b);
    const manifestId = (n: number): string => shown(JSON.parse(readFileSync(join(X, runDir(n), "manifest.json"), "utf8")).snapshotId);
    expect(manifestId(1)).toBe(a);
    const before = treeHash(X);

    // b's run 2 would have been delivered as X/00000001/ (b's run 1) and X/00000002/.
    await sb.advance();
    const b2 = await t.sync("b.db", "--out", X);
    expect(b2.code, b2.stderr).toBe(2);
    expect(b2.stderr).toContain(`belongs to snapshot ${a}`);
    expect(b2.stderr).toContain(`snapshot ${b}`);
    expect(b2.stderr).toMatch(/new folder/);
    expect(treeHash(X)).toEqual(before);
    // Refused before its run: b recorded nothing.
    expect(t.runsOf("b.db")).toBe(1);

    // A new snapshot (no file yet) is another one too; nothing is created for it.
    const c = await t.sync("c.db", "--out", X);
    expect(c.code, c.stderr).toBe(2);
    expect(c.stderr).toContain(`belongs to snapshot ${a}`);
    expect(treeHash(X)).toEqual(before);

    // The same folder as a configured sink.
    const conf = mkdtempSync(join(dir, "conf-"));
    writeFileSync(join(conf, "benefits-sync.config.json"), JSON.stringify({ sinks: { lake: { type: "folder", dir: X } } }));
    const sink = await t.cli(["sync", "--db", join(t.cwd, "b.db"), ...window, "--quiet"], conf);
    expect(sink.code, sink.stderr).toBe(2);
    expect(sink.stderr).toContain(`belongs to snapshot ${a}`);
    expect(sink.stderr).toContain(`snapshot ${b}`);
    expect(treeHash(X)).toEqual(before);
    expect(t.runsOf("b.db")).toBe(1);

    // export --out: b's run 1 would have replaced a's 00000001/.
    const ex = await t.cli(["export", "--db", join(t.cwd, "b.db"), "--run", "1", "--out", X]);
    expect(ex.code, ex.stderr).toBe(2);
    expect(ex.stderr).toContain(`belongs to snapshot ${a}`);
    expect(ex.stderr).toContain(`snapshot ${b}`);
    expect(treeHash(X)).toEqual(before);

    // a keeps delivering to X, and re-exports its own runs there.
    const a2 = await t.sync("a.db", "--out", X);
    expect(a2.code, a2.stderr).toBe(0);
    expect(runFolders(X)).toEqual([1, 2]);
    for (const n of [1, 2]) expect(manifestId(n)).toBe(a);
    const again = await t.cli(["export", "--db", join(t.cwd, "a.db"), "--run", "1", "--out", X, "--quiet"]);
    expect(again.code, again.stderr).toBe(0);
    // b delivers to a folder of its own.
    const own = await t.sync("b.db", "--out", "Y");
    expect(own.code, own.stderr).toBe(0);
    expect(runFolders(join(t.cwd, "Y"))).toEqual([1, 2]);
    expect(existsSync(join(t.cwd, "c.db"))).toBe(false);
  });

  it("export --state and --history into a folder holding another snapshot's export of the same kind, run and format: exit 2 naming both ids, nothing changed; the owner re-exports there", async () => {
    const t = setup("state");
    expect((await t.sync("a.db")).code).toBe(0);
    expect((await t.sync("b.db")).code).toBe(0);
    const [a, b] = [t.idOf("a.db"), t.idOf("b.db")];
    const S = join(t.cwd, "S");
    const exportFrom = (db: string, kind: "--state" | "--history", run = "1") => t.cli(["export", kind, "--run", run, "--format", "csv", "--out", S, "--db", join(t.cwd, db)]);
    for (const kind of ["--state", "--history"] as const) {
      const mine = await exportFrom("a.db", kind);
      expect(mine.code, mine.stderr).toBe(0);
    }
    const before = treeHash(S);
    for (const kind of ["--state", "--history"] as const) {
      // The same kind, run and format, from b: it would have replaced a's folder.
      const theirs = await exportFrom("b.db", kind);
      expect(theirs.code, `${kind}: ${theirs.stderr}`).toBe(2);
      expect(theirs.stderr).toContain(`${S} belongs to snapshot ${a}`);
      expect(theirs.stderr).toContain(`is snapshot ${b}`);
      expect(theirs.stderr).toContain("Nothing was written");
      expect(treeHash(S)).toEqual(before);
    }
    // Nor a delivery of b's run folders beside a's exports.
    const deltas = await t.sync("b.db", "--out", S);
    expect(deltas.code, deltas.stderr).toBe(2);
    expect(deltas.stderr).toContain(`belongs to snapshot ${a}`);
    expect(treeHash(S)).toEqual(before);
    // a's own export of the same run replaces its folder with the same bytes.
    expect((await exportFrom("a.db", "--state")).code).toBe(0);
    expect(treeHash(S)).toEqual(before);
  });

  it("a warehouse fed from one snapshot: sync --sink and export --sink from another exit 2 naming both ids, and the warehouse is as it was", async (ctx) => {
    const url = await pg.freshDatabase(ctx);
    const t = setup("warehouse");
    const a1 = await t.sync("a.db", "--sink", url);
    expect(a1.code, a1.stderr).toBe(0);
    expect((await t.sync("b.db")).code).toBe(0);
    const [a, b] = [t.idOf("a.db"), t.idOf("b.db")];
    const state = async () => [
      await pg.query(url, "SELECT key, value FROM benefits_sync._meta ORDER BY key"),
      await pg.query(url, "SELECT run_id, changes, loaded_at::text FROM benefits_sync._loads ORDER BY run_id"),
      await pg.query(url, "SELECT id, valid_from_run, data FROM benefits_sync.members ORDER BY id"),
    ];
    const before = await state();
    const b2 = await t.sync("b.db", "--sink", url);
    expect(b2.code, b2.stderr).toBe(2);
    expect(b2.stderr).toContain(`another snapshot (${a}, this one is ${b})`);
    const ex = await t.cli(["export", "--db", join(t.cwd, "b.db"), "--run", "2", "--sink", url]);
    expect(ex.code, ex.stderr).toBe(2);
    expect(ex.stderr).toContain(`another snapshot (${a}, this one is ${b})`);
    expect(await state()).toEqual(before);
    await sb.advance();
    const a2 = await t.sync("a.db", "--sink", url);
    expect(a2.code, a2.stderr).toBe(0);
    expect((await pg.query<{ run_id: string }>(url, "SELECT run_id FROM benefits_sync._loads ORDER BY run_id")).map((r) => Number(r.run_id))).toEqual([1, 2]);
  });
});
