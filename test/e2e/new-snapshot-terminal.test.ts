/**
 * On a terminal, converting a snapshot made by an older benefits-sync shows its progress ("upgrading
 * the snapshot (schema 15) ..."); making a new one is no upgrade and says nothing of it. The built
 * CLI runs under a pseudo-terminal (util-linux `script`), as a user's shell runs it.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI } from "../helpers/cli-process.js";
import { unpackSnapshot } from "../helpers/old-snapshot.js";

const dir = mkdtempSync(join(tmpdir(), "bsync-new-snapshot-tty-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `benefits-sync ARGS` with a terminal as stdout and stderr; what the terminal showed. */
function onTerminal(args: string[], db: string): { status: number | null; shown: string } {
  const quoted = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  const r = spawnSync("script", ["-qec", quoted, "/dev/null"], {
    encoding: "utf8",
    env: { ...process.env, BENEFITS_DB: db, BENEFITS_PII_KEY: "new-snapshot-tty-pii-key-0123456789" },
    timeout: 120_000,
  });
  // No `script` (util-linux) is a failure here, never a skip.
  if (r.error) throw r.error;
  return { status: r.status, shown: r.stdout };
}

describe("the snapshot's schema steps on a terminal", () => {
  it("a new snapshot is made without a word of upgrading; an old one tells its upgrade", () => {
    const fresh = onTerminal(["--env", "sandbox", "sync"], join(dir, "new.db"));
    expect(fresh.status, fresh.shown).toBe(0);
    // The terminal is real: the sync's own progress and summary are on it.
    expect(fresh.shown).toMatch(/run 1/i);
    expect(fresh.shown).not.toMatch(/upgrad/i);

    const old = unpackSnapshot(new URL("../fixtures/snapshot-schema14.db.gz", import.meta.url), dir, "old.db");
    const upgraded = onTerminal(["--env", "sandbox", "sync"], old);
    expect(upgraded.shown).toMatch(/upgrading the snapshot \(schema 15\)/);
    expect(upgraded.shown).toMatch(/upgraded the snapshot in \d+ s/);
  });
});
