/**
 * The snapshot a sink check delivers from: a real SQLite file in a temp folder, filled by real
 * syncs (the same `sync` a user runs) from a small in-memory service. Each step changes the data,
 * so every run records changes of its own (inserts, updates, deletes), and one step is a run that
 * fails after committing some: a failed run's changes are delivered like any other.
 */
import type { Database } from "better-sqlite3";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { paginate, type Page } from "../api/paginate.js";
import type { PageSource } from "../extract/page-source.js";
import { sync } from "../pipeline/sync.js";
import { openDatabase } from "../store/file/database.js";
import { StoredResources, type WalkedResource } from "../store/schema/resources.js";
import { SnapshotStore } from "../store/snapshot.js";
import { runDeltas } from "../sinks/run-deltas.js";

type Data = Record<WalkedResource, Record<string, unknown>[]>;

const WINDOW = { from: "2026-01-01", to: "2026-03-31" };

/** A snapshot of the checks' own, in a temp folder; `close()` removes it. */
export interface KitSnapshot {
  readonly db: Database;
  /** One more run (the next step of the data); its id. `fails`: the walk dies after committing part of it. */
  run(opts?: { readonly fails?: boolean }): Promise<number>;
  /** How many changes run `runId` recorded (rows of the stored resources, as a sink receives them). */
  changesOf(runId: number): number;
  close(): void;
}

export function kitSnapshot(): KitSnapshot {
  const dir = mkdtempSync(join(tmpdir(), "benefits-sync-sink-check-"));
  let db: Database;
  try {
    db = openDatabase(join(dir, "snapshot.db"));
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const store = new SnapshotStore(db, { piiKey: randomBytes(32) });
  let step = 0;
  return {
    db,
    async run(opts = {}) {
      const data = dataAt(++step);
      const report = await sync({ source: memoryService(data, opts.fails ? 4 : undefined), store, claimsWindow: WINDOW });
      if (report.runId === null) throw new Error(`the check's own snapshot could not start a run (${report.status}): ${report.error.message}`);
      if (report.status !== (opts.fails ? "failed" : "succeeded")) throw new Error(`the check's own run ${report.runId} ended ${report.status}, not as planned`);
      if (changesOf(db, report.runId) === 0) throw new Error(`the check's own run ${report.runId} recorded no change`);
      return report.runId;
    },
    changesOf: (runId) => changesOf(db, runId),
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function changesOf(db: Database, runId: number): number {
  let n = 0;
  for (const resource of StoredResources) for (const _ of runDeltas(db, resource, [runId])) n++;
  return n;
}

/** The service's data at step `n` (1-based): each step changes something in every resource it walks. */
function dataAt(n: number): Data {
  const members = [member("m1", `Ana ${n}`), member("m2", "Zoë"), member("m3", "李")];
  if (n % 2 === 0) members.push(member(`m${n + 10}`, "Nils"));
  const claims = [claim("k1", "2026-02-01", `${100 + n}.00`)];
  if (n % 2 === 1) claims.push(claim("k2", "2026-02-02", "50.00"));
  return {
    designs: [{ id: "d1", name: `Gold ${n}`, planType: "PPO" }],
    groups: [{ id: "gp1", groupId: "G1", sponsorName: `Acme ${n}`, plans: [{ id: "p1", name: "Gold", basePlanDesignId: "d1" }] }],
    members,
    claims,
  };
}

function member(id: string, firstName: string): Record<string, unknown> {
  return {
    id,
    firstName,
    lastName: "Nguyễn",
    address: { city: "Austin" },
    coverages: [{ id: `c-${id}`, groupId: "G1", status: "active", startDate: "2026-01-01", endDate: null }],
  };
}

function claim(id: string, date: string, amount: string): Record<string, unknown> {
  return { id, groupId: "G1", memberId: "m1", serviceDateFrom: date, claimStatus: "pending", claimAmount: amount, lines: [{ code: "99213", amount }] };
}

/**
 * The service's listings over `data`, one record a page, filtered as the service filters them.
 * With `failFrom`, that fetch and every later one fail: the designs are applied, then the walk dies.
 */
function memoryService(data: Data, failFrom?: number): PageSource {
  let fetches = 0;
  return {
    pages(resource, filters = {}, opts = {}): AsyncGenerator<Page<unknown>> {
      const all = data[resource].filter((item) => matches(resource, item, filters));
      return paginate(
        async (after) => {
          if (failFrom !== undefined && ++fetches >= failFrom) throw new Error("the check's service is down (a planned failure)");
          const start = after === undefined ? 0 : all.findIndex((x) => x.id === after) + 1;
          return { items: after !== undefined && start === 0 ? [] : all.slice(start, start + 1) };
        },
        opts.startAfter !== undefined ? { startAfter: opts.startAfter } : {},
      );
    },
  };
}

function matches(resource: WalkedResource, item: Record<string, unknown>, f: Record<string, string | undefined>): boolean {
  if (resource === "members" && f.groupId) return ((item.coverages as { groupId?: unknown }[] | undefined) ?? []).some((c) => c.groupId === f.groupId);
  if (resource !== "claims") return true;
  const date = String(item.serviceDateFrom);
  return (
    (!f.groupId || item.groupId === f.groupId) &&
    (!f.memberId || item.memberId === f.memberId) &&
    (!f.serviceDateFrom || date >= f.serviceDateFrom) &&
    (!f.serviceDateTo || date <= f.serviceDateTo)
  );
}
