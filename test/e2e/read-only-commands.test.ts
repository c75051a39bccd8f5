/**
 * A command that only reads the snapshot never creates, converts or chmods it: `runs --db
 * empty.db` used to turn a 0-byte file into a 1.2 MB snapshot of mode 0600. On a 0-byte file and
 * on a missing path, each read-only command leaves the file as it was (size 0, same mode and
 * mtime) or absent; those that need a snapshot say there is none yet (exit 2).
 */
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCli } from "../helpers/cli-process.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bsync-readonly-"));
  writeFileSync(join(dir, "benefits-sync.config.json"), "{}\n");
  writeFileSync(join(dir, "census.csv"), "groupId,ssn\n");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Each read-only command, and whether it needs a snapshot (exit 2 and "no snapshot at X yet" without one). */
const commands: [string[], boolean][] = [
  [["runs"], true],
  [["runs", "--json"], true],
  [["jobs"], false],
  [["export", "--run", "1", "--out", "out"], true],
  [["reconcile", "--from", "1", "--to", "2", "--out", "report"], true],
  [["census", "plan", "census.csv", "--group", "G-1"], true],
  [["config", "check"], false],
  [["webhooks", "status"], false],
];

describe.each(commands)("%j on no snapshot", (args, needsOne) => {
  const run = (db: string) => startCli(args, { BENEFITS_DB: db, BENEFITS_PII_KEY: "read-only-test-pii-key-0123456789" }, dir).done;
  const name = args.join("-").replace(/[^a-z0-9-]/gi, "");

  it("a 0-byte file stays 0 bytes with its mode and mtime", async () => {
    const db = join(dir, `${name}-empty.db`);
    writeFileSync(db, "");
    chmodSync(db, 0o644);
    utimesSync(db, new Date("2026-01-02T03:04:05Z"), new Date("2026-01-02T03:04:05Z"));
    const before = statSync(db);
    const r = await run(db);
    const said = `exit ${r.code}\n${r.stderr}\n${r.stdout}`;
    const after = statSync(db);
    expect({ size: after.size, mode: after.mode, mtimeMs: after.mtimeMs }, said).toEqual({ size: 0, mode: before.mode, mtimeMs: before.mtimeMs });
    expect(existsSync(`${db}-wal`), said).toBe(false);
    if (needsOne) {
      expect(r.code, said).toBe(2);
      expect(r.stderr, said).toContain(`no snapshot at ${db} yet (it is an empty file): run \`benefits-sync sync\` first`);
    } else expect(r.code, said).toBe(0);
  }, 60_000);

  it("a missing path stays missing", async () => {
    const db = join(dir, `${name}-missing.db`);
    const r = await run(db);
    const said = `exit ${r.code}\n${r.stderr}\n${r.stdout}`;
    expect(existsSync(db), said).toBe(false);
    if (needsOne) {
      expect(r.code, said).toBe(2);
      expect(r.stderr, said).toMatch(/no snapshot at .* run `benefits-sync sync` first/);
    } else expect(r.code, said).toBe(0);
  }, 60_000);
});
