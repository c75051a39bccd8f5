/**
 * One output, one snapshot, where the delivery itself decides (a sync's check before its run
 * cannot see a folder that another snapshot fills meanwhile, and `deliverFolder` has no such
 * check): a folder holding another snapshot's run folders refuses the delivery before the ledger
 * claims anything, so nothing changes in the folder or in the snapshot.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { deliverFolder } from "../../../src/sinks/files/formats.js";
import { tempStore, type TempStore } from "../../helpers/temp-store.js";
import { runFolders, treeHash } from "../../helpers/run-folders.js";
import { baseData, runSync } from "./fixtures.js";

const stores: TempStore[] = [];
afterEach(() => stores.splice(0).forEach((s) => s.cleanup()));
const setup = (): TempStore => stores[stores.push(tempStore()) - 1]!;

const idOf = (t: TempStore): string => t.db.prepare("SELECT value FROM _meta WHERE key = 'snapshot_id'").pluck().get() as string;
const deliveries = (t: TempStore): number => t.db.prepare("SELECT COUNT(*) FROM _deliveries").pluck().get() as number;

describe("a folder delivery from another snapshot", () => {
  it("is refused (OUTPUT_SNAPSHOT) naming the folder's snapshot, before the ledger claims a run; the folder's own snapshot keeps delivering", async () => {
    const a = setup();
    const b = setup();
    const out = join(mkdtempSync(join(a.dir, "out-")), "X");
    const ra = await runSync(a, baseData());
    expect((await deliverFolder(a.db, out, "csv", ra.runId)).status).toBe("delivered");
    const rb = await runSync(b, baseData());
    const before = treeHash(out);
    const refused = await deliverFolder(b.db, out, "csv", rb.runId);
    expect(refused.status).toBe("failed");
    expect(refused.error?.code).toBe("OUTPUT_SNAPSHOT");
    expect(refused.error?.message).toContain(join(out, "00000001", "manifest.json"));
    expect(treeHash(out)).toEqual(before);
    expect(deliveries(b)).toBe(0);
    // The other way round: b's folder of its own is b's, and a keeps delivering to X.
    expect((await deliverFolder(b.db, join(b.dir, "Y"), "csv", rb.runId)).status).toBe("delivered");
    const data = baseData();
    data.members[0]!.firstName = "Ana Maria";
    const ra2 = await runSync(a, data);
    expect((await deliverFolder(a.db, out, "csv", ra2.runId)).status).toBe("delivered");
    expect(runFolders(out)).toEqual([1, 2]);
    expect(idOf(a)).not.toBe(idOf(b));
  });
});
