/**
 * The default result file of a census apply never names a file an earlier apply wrote: two applies
 * a second apart used to get one name (the stamp stopped at seconds), and the second's rename
 * replaced the first's result (found by docs-onboarding.test.ts on a fast machine).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultResultPath } from "../../../src/eligibility/result-file.js";

const dir = mkdtempSync(join(tmpdir(), "bsync-result-path-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("defaultResultPath", () => {
  it("names the apply by its UTC start to the millisecond, beside the snapshot", () => {
    const p = defaultResultPath(join(dir, "a.db"), "gp/1", new Date("2026-11-27T04:55:12.345Z"));
    expect(p).toBe(join(dir, "a.db.census", "results", "20261127T045512.345Z-gp_1.json"));
  });

  it("applies in the same second get two names; a name already taken gets -2, then -3", () => {
    const db = join(dir, "b.db");
    const first = defaultResultPath(db, "gp", new Date("2026-11-27T04:55:12.100Z"));
    const second = defaultResultPath(db, "gp", new Date("2026-11-27T04:55:12.900Z"));
    expect(second).not.toBe(first);
    const at = new Date("2026-11-27T04:55:13.000Z");
    const taken = defaultResultPath(db, "gp", at);
    mkdirSync(dirname(taken), { recursive: true });
    writeFileSync(taken, "{}");
    const next = defaultResultPath(db, "gp", at);
    expect(basename(next)).toBe("20261127T045513.000Z-gp-2.json");
    writeFileSync(next, "{}");
    expect(basename(defaultResultPath(db, "gp", at))).toBe("20261127T045513.000Z-gp-3.json");
  });
});
