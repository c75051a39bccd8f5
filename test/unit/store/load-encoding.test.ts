import { describe, expect, it } from "vitest";
import { encodePage } from "../../../src/pipeline/page-inputs.js";
import { Encoder } from "../../../src/store/walk/prepare-page.js";
import { StoredResources } from "../../../src/store/schema/resources.js";
import { defaultDeletePolicy } from "../../../src/store/runs/run-state.js";
import { applyPageInput, type PageInput } from "../../../src/store/snapshot-port.js";
import { scopeOf } from "../../../src/store/walk/scopes.js";
import { useTempStores, type TempStore } from "../../helpers/temp-store.js";

/**
 * A load from empty hands each page to the store either encoded on the walk's thread or as ids
 * and texts for the store to encode (the sync picks by how busy the store is, page by page). Both
 * must leave the very same snapshot: versions, typed columns, fingerprints, quarantine, counts.
 */
const member = (n: number, extra: Record<string, unknown> = {}) => ({
  id: `m${n}`,
  subscriberId: `S${n}`,
  firstName: n % 2 ? "Zoë" : "Ana",
  lastName: `L${n}`,
  ssn: `123-45-${String(6000 + n)}`,
  address: { zip: "78701", city: "Austin", line1: `${n} Main` },
  coverages: [
    { id: `c${n}`, groupId: "200000", planId: "p1", status: "active", startDate: "2026-01-01", endDate: null },
    { status: "active" }, // no id: quarantined, and the member loses its fingerprint
  ].slice(0, n % 3 === 0 ? 2 : 1),
  ...extra,
});
const claim = (n: number) => ({
  lines: [{ code: "99213", amount: "12.50" }],
  paidAmount: `${n}.05`,
  memberId: `m${n % 4}`,
  id: `k${n}`,
  groupId: n % 2 ? "200000" : "200001",
  processing: { paidDate: "2026-01-09", denialReason: null },
});

// Server text, keys in its own order, with the odd item a walk meets.
const memberPages = [
  [member(1), member(2), member(3), { firstName: "no id" }, member(4)].map((m) => JSON.stringify(m)),
  [member(5), member(1, { lastName: "seen again" }), member(6)].map((m) => JSON.stringify(m)),
];
const claimPages = [[claim(1), claim(2), claim(3)].map((c) => JSON.stringify(c)), ["not json", JSON.stringify(claim(4))]];

function load(t: TempStore, encodeAll: boolean): string[] {
  const encoder = new Encoder(t.store.encoder.options);
  const run = t.store.startRun("sync", {});
  expect([...run.empty].sort()).toEqual([...StoredResources].sort());
  const forms: string[] = [];
  for (const [resource, pages] of [["members", memberPages], ["claims", claimPages]] as const) {
    const scope = scopeOf(resource);
    t.store.beginScope(scope);
    pages.forEach((raw, i) => {
      const page: PageInput = { raw, next: i < pages.length - 1 ? "x" : undefined, end: i === pages.length - 1 };
      const input = encodePage(encoder, scope, page, encodeAll);
      forms.push(input.prepared ? "prepared" : input.lazy ? "lazy" : "other");
      applyPageInput(t.store, scope, input);
    });
  }
  expect(t.store.finishRun(defaultDeletePolicy).status).toBe("succeeded");
  return forms;
}

type Row = Record<string, unknown>;

function contents(t: TempStore) {
  const tables = Object.fromEntries(
    StoredResources.map((r) => [r, (t.db.prepare(`SELECT * FROM _${r}_v ORDER BY id, vid`).all() as Row[]).map(({ vid: _vid, ...row }) => row)]),
  ) as Record<(typeof StoredResources)[number], Row[]>;
  return {
    tables,
    quarantine: t.db.prepare("SELECT resource, scope, id, reason, excerpt FROM _quarantine ORDER BY resource, id, reason").all() as Row[],
    counts: t.db.prepare("SELECT resource, seen, inserted, updated, deleted, unchanged, quarantined FROM _run_counts ORDER BY resource").all(),
  };
}

describe("a load from empty, encoded on the walk's thread or by the store", () => {
  const setup = useTempStores();

  it("leaves the same snapshot either way", () => {
    const here = setup();
    const there = setup();
    // Each path really taken: prepared pages one way, ids and texts the other.
    expect(load(here, true)).toEqual(["prepared", "prepared", "prepared", "prepared"]);
    expect(load(there, false)).toEqual(["lazy", "lazy", "lazy", "lazy"]);
    const a = contents(here);
    const b = contents(there);
    expect(a).toEqual(b);
    // And the snapshot is what the pages say: a member once (first sighting), SSNs masked, the
    // id-less items and the unreadable text quarantined, the member with a bad child unfingerprinted.
    expect(a.tables.members.map((m) => m.id)).toEqual(["m1", "m2", "m3", "m4", "m5", "m6"]);
    expect(a.tables.members.find((m) => m.id === "m1")!.lastName).toBe("L1");
    expect(a.tables.members.find((m) => m.id === "m3")!.fp).toBeNull();
    expect(a.tables.members.find((m) => m.id === "m2")!.fp).not.toBeNull();
    expect(JSON.stringify(a.tables)).not.toMatch(/123-45-6\d{3}/);
    expect(a.tables.coverages.map((c) => c.id)).toEqual(["c1", "c2", "c3", "c4", "c5", "c6"]);
    expect(a.tables.claims.map((c) => [c.id, c.paidAmount, c.paidAmount_cents])).toEqual([
      ["k1", "1.05", 105],
      ["k2", "2.05", 205],
      ["k3", "3.05", 305],
      ["k4", "4.05", 405],
    ]);
    expect(a.quarantine.map((q) => q.resource)).toEqual(["claims", "members", "members", "members"]);
  });
});
