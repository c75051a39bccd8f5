/**
 * Two commands opening a new snapshot together (issue 51): each opens the file as a command does
 * first (resolveSnapshotPiiKey: open, check the header, migrate, record the key's check). The one
 * that comes second must see either nothing or the other's committed schema, never a header of 0
 * beside the tables of schema 1 (which it took for a lowered header and refused, 1 pair in 5 here
 * before the header and the tables were read in one transaction).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const BUILT = join(root, "dist", "src", "store", "pii", "pii-key-identity.js");
const dir = mkdtempSync(join(tmpdir(), "bsync-first-open-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function open(db: string): Promise<{ code: number; stderr: string }> {
  const script = `const m = await import(${JSON.stringify(BUILT)}); m.resolveSnapshotPiiKey(process.argv[1], undefined);`;
  return new Promise((resolve) => execFile(process.execPath, ["--input-type=module", "-e", script, db], (e, _out, stderr) => resolve({ code: e ? 1 : 0, stderr })));
}

describe("two commands opening a new snapshot together", () => {
  it("both go on, 40 pairs of processes in a row: none refuses the file the other is creating", async () => {
    const refused: string[] = [];
    for (let i = 0; i < 40; i++) {
      const db = join(dir, `snap-${i}.db`);
      for (const r of await Promise.all([open(db), open(db)])) if (r.code !== 0) refused.push(`pair ${i}: ${r.stderr.split("\n").find((l) => /Error\b/.test(l)) ?? r.stderr}`);
    }
    expect(refused).toEqual([]);
  });
});
