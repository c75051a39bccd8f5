/**
 * What a folder's manifest tells a loader beyond its files: the run's start and finish, what it
 * walked, the snapshot it came from, the format, and the layout and dictionary versions, so that
 * a loader can refuse a layout it does not know.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sync } from "../../../src/pipeline/sync.js";
import { exportFolder } from "../../../src/sinks/files/formats.js";
import { openDatabase } from "../../../src/store/file/database.js";
import { memorySource } from "../../helpers/memory-source.js";
import { useTempStores } from "../../helpers/temp-store.js";
import { WINDOW, baseData, runSync } from "./fixtures.js";

const setup = useTempStores();
const manifestOf = (dir: string) => JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as Record<string, unknown>;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

describe("manifest.json", () => {
  it("says when the run started and finished (UTC ISO 8601), what it walked, the snapshot's id, the format and the layout", async () => {
    const t = setup();
    const window = { from: "2026-01-15", to: "2026-02-28" };
    const r = await runSync(t, baseData(), { window });
    const recorded = t.db.prepare("SELECT started_at, finished_at FROM runs WHERE run_id = ?").get(r.runId) as { started_at: string; finished_at: string };
    const snapshotId = t.db.prepare("SELECT value FROM _meta WHERE key = 'snapshot_id'").pluck().get() as string;
    for (const format of ["csv", "jsonl", "parquet"] as const) {
      const m = manifestOf((await exportFolder(t.db, r.runId, join(t.dir, format), format)).dir);
      expect(m).toMatchObject({
        runId: r.runId,
        format,
        layoutVersion: 2,
        snapshotId,
        runs: [r.runId],
        startedAt: recorded.started_at,
        finishedAt: recorded.finished_at,
        walked: { resources: ["designs", "groups", "members", "claims"], claimsWindow: window },
      });
      expect(m.startedAt).toMatch(ISO_UTC);
      expect(m.finishedAt).toMatch(ISO_UTC);
      expect(typeof m.dictionaryVersion).toBe("string");
      expect(m.dictionaryVersion).toMatch(/^[0-9a-f]{12}$/);
    }
  });

  it("a run that walked only some resources, without claims, says so (no claims window)", async () => {
    const t = setup();
    const r = await sync({ source: memorySource(() => baseData()), store: t.store, claimsWindow: WINDOW, resources: ["designs", "groups"] });
    const m = manifestOf((await exportFolder(t.db, r.runId!, join(t.dir, "out"))).dir);
    expect(m.walked).toEqual({ resources: ["designs", "groups"], claimsWindow: null });
  });

  it("a snapshot without an id gets one (a random UUID) the first time it is needed, kept for every later folder", async () => {
    const t = setup();
    const r = await runSync(t, baseData());
    t.db.prepare("DELETE FROM _meta WHERE key = 'snapshot_id'").run();
    const first = manifestOf((await exportFolder(t.db, r.runId, join(t.dir, "a"))).dir);
    expect(first.snapshotId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(t.db.prepare("SELECT value FROM _meta WHERE key = 'snapshot_id'").pluck().get()).toBe(first.snapshotId);
    expect(manifestOf((await exportFolder(t.db, r.runId, join(t.dir, "b"))).dir).snapshotId).toBe(first.snapshotId);
  });

  it("export from a snapshot opened read-only that has no id writes null there, and changes nothing in the snapshot", async () => {
    const t = setup();
    const r = await runSync(t, baseData());
    t.db.prepare("DELETE FROM _meta WHERE key = 'snapshot_id'").run();
    const ro = openDatabase(t.path, { readonly: true });
    try {
      expect(manifestOf((await exportFolder(ro, r.runId, join(t.dir, "ro"))).dir).snapshotId).toBeNull();
    } finally {
      ro.close();
    }
    expect(t.db.prepare("SELECT value FROM _meta WHERE key = 'snapshot_id'").pluck().get()).toBeUndefined();
  });
});
