import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/errors.js";
import { openDatabase } from "../../../src/store/file/database.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "db-path-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function refusal(path: string, opts?: { readonly?: boolean }): ConfigError {
  try {
    openDatabase(path, opts).close();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe("SNAPSHOT_PATH");
    const message = (err as Error).message;
    expect(message).toContain(path);
    expect(message).toMatch(/--db/);
    expect(message).toMatch(/BENEFITS_DB/);
    // No raw errno text: the message says it in words.
    expect(message).not.toMatch(/\b(ENOENT|EACCES|EEXIST|ENOTDIR|EISDIR):/);
    return err as ConfigError;
  }
  throw new Error(`expected ${path} to be refused`);
}

describe("openDatabase: a --db path that cannot work is a clear configuration error", () => {
  it("a missing directory is named, and not created", () => {
    const missing = join(dir, "no", "such");
    const err = refusal(join(missing, "snap.db"));
    expect(err.message).toContain(`the directory ${missing} does not exist`);
    expect(err.message).toMatch(/create it/);
    expect(existsSync(join(dir, "no"))).toBe(false);
  });

  it("a path under a regular file names that file", () => {
    const file = join(dir, "afile");
    writeFileSync(file, "x");
    const err = refusal(join(file, "snap.db"));
    expect(err.message).toContain(`${file} is a file, not a directory`);
  });

  it("a deeper path under a regular file names that file too", () => {
    const file = join(dir, "afile");
    writeFileSync(file, "x");
    const err = refusal(join(file, "sub", "snap.db"));
    expect(err.message).toContain(`${file} is a file, not a directory`);
  });

  it("a --db that names a directory says so and suggests a file inside it", () => {
    const d = join(dir, "adir");
    mkdirSync(d);
    const err = refusal(d);
    expect(err.message).toContain(`${d} is a directory`);
    expect(err.message).toContain(join(d, "benefits-sync.db"));
    expect(statSync(d).isDirectory()).toBe(true);
  });

  it("a directory the process cannot write in (even as root: sysfs)", () => {
    const err = refusal("/sys/benefits-sync-test.db");
    expect(err.message).toMatch(/cannot create or write/);
    expect(err.message).toContain("/sys");
  });

  it("a directory that exists but takes no new files (procfs)", () => {
    const err = refusal("/proc/benefits-sync-test.db");
    expect(err.message).toMatch(/cannot create/);
    expect(err.message).not.toContain("does not exist");
  });

  it("a read-only open of a snapshot that does not exist", () => {
    const err = refusal(join(dir, "none.db"), { readonly: true });
    expect(err.message).toMatch(/no snapshot/);
  });

  it("still opens a good path, with mode 0600", () => {
    const p = join(dir, "ok.db");
    openDatabase(p).close();
    expect(statSync(p).mode & 0o777).toBe(0o600);
    openDatabase(p, { readonly: true }).close();
  });
});
