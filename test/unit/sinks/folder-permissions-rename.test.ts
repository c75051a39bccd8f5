/**
 * "Applied atomically with the folder's rename": a loader watching DIR may open a run folder the
 * instant its name appears, so the folder, every file in it and DIR itself must already carry the
 * configured mode and group at that instant, not a moment later. The file system's rename is
 * wrapped to look at the folder right after it lands under its final name, before the sink's
 * code runs another line; permissions set after the rename would be seen missing here.
 */
import { execFileSync } from "node:child_process";
import type * as Fs from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";

interface Seen {
  readonly to: string;
  readonly modes: Record<string, string>;
  readonly gids: Record<string, number>;
}
const seen = vi.hoisted(() => ({ landed: [] as Seen[] }));

vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof Fs>();
  const renameSync: typeof fs.renameSync = (from, to) => {
    fs.renameSync(from, to);
    const dest = String(to);
    // A run folder under its final name (its run id, 8 digits): look at it as a loader would now.
    if (!/\/\d{8}$/.test(dest)) return;
    const parent = dest.replace(/\/[^/]+$/, "");
    const paths = [parent, dest, ...fs.readdirSync(dest).map((n) => join(dest, n))];
    const label = (p: string) => (p === parent ? "DIR" : p === dest ? "folder" : p.slice(dest.length + 1));
    seen.landed.push({
      to: dest,
      modes: Object.fromEntries(paths.map((p) => [label(p), (fs.statSync(p).mode & 0o777).toString(8)])),
      gids: Object.fromEntries(paths.map((p) => [label(p), fs.statSync(p).gid])),
    });
  };
  return { ...fs, default: { ...fs, renameSync }, renameSync };
});

// Loaded anew, with the mock: test:quick runs files in one process, where another file may have
// loaded these modules with the real fs.
vi.resetModules();
const { configuredOutputs, deliverAll } = await import("../../../src/sinks/outputs.js");
const { useTempStores } = await import("../../helpers/temp-store.js");
const { baseData, runSync } = await import("./fixtures.js");

const setup = useTempStores();
const asRoot = process.getuid?.() === 0;
const myGid = Number(execFileSync("id", ["-g"], { encoding: "utf8" }).trim());
/** As root, a group other than ours, so that a group set late would be seen missing. */
const group = asRoot ? Number(execFileSync("getent", ["group", "daemon"], { encoding: "utf8" }).split(":")[2]) : myGid;

describe("a run folder's permissions, at the instant it appears", () => {
  it.each(["csv", "parquet"] as const)('%s: mode "0640" and a group are already on the folder, its files and DIR when its name appears (umask 0077)', async (format) => {
    const t = setup();
    const r1 = await runSync(t, baseData());
    const d = baseData();
    d.members[0]!.firstName = "Ana Maria";
    const r2 = await runSync(t, d);
    const dir = join(t.dir, "shared");
    const specs = configuredOutputs({ lake: { type: "folder", dir, format, mode: "0640", group } }, {}, t.dir);
    seen.landed.length = 0;
    const old = process.umask(0o077);
    try {
      const [out] = await deliverAll(t.db, Object.values(specs), r2.runId);
      expect(out!.outcome.status).toBe("delivered");
    } finally {
      process.umask(old);
    }
    // Both runs were delivered, each folder by its own rename.
    expect(seen.landed.map((s) => s.to)).toEqual([r1.runId, r2.runId].map((n) => join(dir, String(n).padStart(8, "0"))));
    for (const s of seen.landed) {
      const files = Object.keys(s.modes).filter((k) => k !== "DIR" && k !== "folder");
      expect(files).toContain("manifest.json");
      expect(files.length).toBeGreaterThan(1);
      expect(s.modes, s.to).toEqual(Object.fromEntries([["DIR", "750"], ["folder", "750"], ...files.map((f) => [f, "640"])]));
      expect(Object.values(s.gids).every((g) => g === group), JSON.stringify(s.gids)).toBe(true);
    }
  });
});
