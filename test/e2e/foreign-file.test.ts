/**
 * `--db` pointed at a file that is not our snapshot: every command that opens the snapshot refuses
 * (exit 2), names the file, says what it looks like, and changes nothing: the bytes, the mode, the
 * journal mode, and no -wal, -shm, -journal or .pii-key file beside it. An empty file and a new
 * path are ours to create; a snapshot made by an older benefits-sync (no application_id yet) is
 * still recognised, and gets the application_id.
 */
import BetterSqlite3 from "better-sqlite3";
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../../src/store/schema/migrations.js";
import { startCli } from "../helpers/cli-process.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bsync-foreign-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Ours: "BSYN" (see src/store/file/snapshot-file.ts); written here as the number, not imported. */
const OUR_APPLICATION_ID = 0x4253594e;

/** Every command that opens the snapshot, as a user would type it (none reaches a service). */
function commands(out: string): string[][] {
  return [
    ["sync", "--env", "sandbox", "--quiet"],
    ["runs"],
    ["runs", "--abandon", "1"],
    ["export", "--run", "1", "--out", join(out, "export")],
    ["reconcile", "--from", "1", "--to", "1", "--out", join(out, "reconcile")],
    ["jobs"],
    ["schedule"],
  ];
}

interface FileState {
  sha: string;
  mode: number;
  /** Bytes 18 and 19 of a SQLite header: 1 rollback journal, 2 WAL. */
  journal: string;
  beside: string[];
}

function state(path: string, folder: string): FileState {
  const st = statSync(path);
  const bytes = st.isFile() ? readFileSync(path) : Buffer.alloc(0);
  return {
    sha: createHash("sha256").update(bytes).digest("hex"),
    mode: st.mode & 0o7777,
    journal: bytes.length >= 20 ? `${bytes[18]}/${bytes[19]}` : "none",
    beside: readdirSync(folder).sort(),
  };
}

/**
 * Every command refuses the file, exit 2, and leaves it as it was. A snapshot in WAL mode (`wal`)
 * gets SQLite's -shm and an empty -wal beside it from a reading command, as from every reader.
 */
async function expectRefusedUntouched(path: string, looksLike: RegExp, opts: { wal?: boolean } = {}): Promise<void> {
  const folder = join(path, "..");
  const before = state(path, folder);
  const out = mkdtempSync(join(dir, "out-"));
  for (const args of commands(out)) {
    const r = await startCli(args, { BENEFITS_DB: path }).done;
    const said = `${args.join(" ")}: exit ${r.code}\n${r.stderr}${r.stdout}`;
    expect(r.code, said).toBe(2);
    expect(r.stderr, said).toContain(path);
    expect(r.stderr, said).toMatch(looksLike);
    expect(r.stderr, said).not.toMatch(/SQLITE_|file is not a database|no such table|already exists/);
    const after = state(path, folder);
    if (opts.wal) {
      expect(statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0, said).toBe(0);
      after.beside = after.beside.filter((f) => !/-(wal|shm)$/.test(f));
    }
    expect(after, said).toEqual(before);
    expect(readdirSync(out), said).toEqual([]);
  }
}

describe("--db pointed at a file that is not a benefits-sync snapshot", () => {
  it("another application's SQLite file (WAL off, mode 0644, a table named runs) is refused by every command and left as it was", async () => {
    const folder = join(dir, "app");
    mkdirSync(folder);
    const path = join(folder, "crm.sqlite");
    const other = new BetterSqlite3(path);
    other.exec("CREATE TABLE runs (id INTEGER PRIMARY KEY, started TEXT); CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);");
    other.prepare("INSERT INTO runs (started) VALUES (?)").run("2026-01-01");
    other.prepare("INSERT INTO customers (name) VALUES (?)").run("Acme");
    expect(other.pragma("journal_mode", { simple: true })).toBe("delete");
    other.close();
    chmodSync(path, 0o644);

    await expectRefusedUntouched(path, /is not a benefits-sync snapshot: it is a SQLite database of another application \(2 tables: customers, runs\)/);
    const after = new BetterSqlite3(path, { readonly: true });
    expect(after.pragma("journal_mode", { simple: true })).toBe("delete");
    expect(after.prepare("SELECT name FROM sqlite_master ORDER BY name").pluck().all()).toEqual(["customers", "runs"]);
    after.close();
    expect(statSync(path).mode & 0o777).toBe(0o644);
  });

  it("a SQLite file with another application's application_id is refused", async () => {
    const folder = join(dir, "appid");
    mkdirSync(folder);
    const path = join(folder, "other.db");
    const other = new BetterSqlite3(path);
    other.pragma(`application_id = ${0x47504b47}`); // "GPKG", a GeoPackage
    other.close();
    chmodSync(path, 0o644);
    await expectRefusedUntouched(path, /is not a benefits-sync snapshot: it is a SQLite database of another application \(application_id 0x47504b47\)/);
  });

  it("a file of random bytes is refused by every command and left as it was", async () => {
    const folder = join(dir, "random");
    mkdirSync(folder);
    const path = join(folder, "blob.db");
    writeFileSync(path, randomBytes(5000));
    chmodSync(path, 0o644);
    await expectRefusedUntouched(path, /is not a benefits-sync snapshot: it is not a SQLite database \(5000 bytes that do not begin with SQLite's header\)/);
  });

  it("a directory is refused by every command and left as it was", async () => {
    const folder = join(dir, "dirs");
    mkdirSync(folder);
    const path = join(folder, "snapdir");
    mkdirSync(path, 0o755);
    await expectRefusedUntouched(path, /is a directory/);
    expect(readdirSync(path)).toEqual([]);
  });
});

describe("--db that is ours", () => {
  it("an empty 0-byte file and a new path become snapshots, marked with our application_id", async () => {
    const empty = join(dir, "empty.db");
    writeFileSync(empty, "");
    const fresh = join(dir, "fresh.db");
    for (const path of [empty, fresh]) {
      const r = await startCli(["sync", "--env", "sandbox", "--quiet"], { BENEFITS_DB: path }).done;
      expect(r.code, r.stderr).toBe(0);
      const db = new BetterSqlite3(path, { readonly: true });
      expect(db.pragma("application_id", { simple: true })).toBe(OUR_APPLICATION_ID);
      expect(db.prepare("SELECT status FROM _runs").pluck().all()).toEqual(["succeeded"]);
      db.close();
    }
  });

  it("a snapshot made by an older benefits-sync (schema 6, no application_id) is still recognised, and marked", async () => {
    const path = join(dir, "old.db");
    // As benefits-sync before this change made it: WAL, the first six migrations, application_id 0.
    const old = new BetterSqlite3(path);
    old.pragma("journal_mode = WAL");
    for (let v = 0; v < 6; v++) {
      old.transaction(() => {
        migrations[v]!(old);
        old.pragma(`user_version = ${v + 1}`);
      })();
    }
    old.close();
    const runs = await startCli(["runs"], { BENEFITS_DB: path }).done;
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout).toContain("No runs yet.");
    const r = await startCli(["sync", "--env", "sandbox", "--quiet"], { BENEFITS_DB: path }).done;
    expect(r.code, r.stderr).toBe(0);
    const db = new BetterSqlite3(path, { readonly: true });
    expect(db.pragma("application_id", { simple: true })).toBe(OUR_APPLICATION_ID);
    db.close();
  });

  it("a snapshot whose header says an older schema than it holds (a restore with a wrong user_version) is refused by every command and left as it was", async () => {
    const made = join(dir, "made.db");
    const r = await startCli(["sync", "--env", "sandbox", "--quiet"], { BENEFITS_DB: made }).done;
    expect(r.code, r.stderr).toBe(0);
    for (const lowered of [4, 0]) {
      const folder = mkdtempSync(join(dir, `lowered-${lowered}-`));
      const path = join(folder, "restored.db");
      const source = new BetterSqlite3(made, { readonly: true });
      await source.backup(path);
      source.close();
      writeFileSync(`${path}.pii-key`, readFileSync(`${made}.pii-key`), { mode: 0o600 });
      const db = new BetterSqlite3(path);
      db.pragma(`user_version = ${lowered}`);
      db.close();
      await expectRefusedUntouched(path, new RegExp(`says it has schema ${lowered} \\(PRAGMA user_version\\), but it holds what schema \\d+ or later makes \\([^)]*_suspects.*Nothing was changed\\. Restore the snapshot whole from a backup`), { wal: true });
      const db2 = new BetterSqlite3(path, { readonly: true });
      expect(db2.pragma("user_version", { simple: true })).toBe(lowered);
      db2.close();
    }
  });
});
