import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sync } from "../../../src/pipeline/sync.js";
import { diffStates, expectedState, recordedChanges, snapshotState, stateToObject } from "../../helpers/expected.js";
import { memorySource, type MemoryData } from "../../helpers/memory-source.js";
import { syncStarted, TEST_PII_KEY, tempStore } from "../../helpers/temp-store.js";

const window = { from: "1990-01-01", to: "2030-12-31" };
const text = fc.oneof(fc.string({ unit: "grapheme", maxLength: 6 }), fc.constantFrom("José", "Zoë", "Nguyễn", "O'Brien", "李", ""));
const maybe = <T,>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null });
const day = fc.constantFrom("2024-02-29", "2026-02-28", "2026-03-01", "2026-12-31", "2000-02-29");

const member = (id: string) =>
  fc.record({
    id: fc.constant(id),
    firstName: maybe(text),
    lastName: text,
    dateOfBirth: maybe(day),
    ssn: fc.constantFrom("123-45-6789", "987-65-4321", null),
    address: maybe(fc.record({ city: maybe(text), zip: fc.constantFrom("78701", "10001") })),
    coverages: fc.uniqueArray(fc.constantFrom("a", "b", "c"), { minLength: 1, maxLength: 3 }).chain((ks) =>
      fc.tuple(...ks.map((k) => fc.record({ id: fc.constant(`${id}-${k}`), groupId: fc.constantFrom("G1", "G2"), status: fc.constantFrom("active", "terminated"), endDate: maybe(day) }))),
    ),
  });

const claim = (id: string) =>
  fc.record({ id: fc.constant(id), groupId: fc.constantFrom("G1", "G2"), memberId: fc.constantFrom("m1", "m2"), serviceDateFrom: day, claimStatus: fc.constantFrom("pending", "paid", "denied"), claimAmount: fc.constantFrom("0.00", "12.50", "1234.50") });

const subsetOf = <T,>(ids: string[], make: (id: string) => fc.Arbitrary<T>) =>
  fc.subarray(ids).chain((chosen) => (chosen.length ? fc.tuple(...chosen.map(make)) : fc.constant([] as T[])));

const dataSet: fc.Arbitrary<MemoryData> = fc.record({
  designs: subsetOf(["d1", "d2", "d3"], (id) => fc.record({ id: fc.constant(id), name: text, configuration: fc.record({ tier: maybe(fc.integer()) }) })),
  groups: fc.tuple(
    ...["G1", "G2"].map((g) =>
      fc.record({ id: fc.constant(`gp-${g}`), groupId: fc.constant(g), sponsorName: text, plans: subsetOf([`${g}-p1`, `${g}-p2`], (id) => fc.record({ id: fc.constant(id), name: text })) }),
    ),
  ),
  members: subsetOf(["m1", "m2", "m3", "m4", "m5", "m6"], member),
  claims: subsetOf(["k1", "k2", "k3", "k4", "k5"], claim),
}) as fc.Arbitrary<MemoryData>;

// A seeded permutation of the whole list: the order the service returns records in must not matter.
const shuffler = fc.integer().map((seed) => (items: unknown[]) => {
  let s = seed | 0;
  for (let i = items.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1103515245) + 12345) | 0;
    const j = Math.abs(s) % (i + 1);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
});

describe("the recorded changes turn the old snapshot into the new one (property)", () => {
  it("holds for random old and new data sets, page sizes and page orders, with no no-op updates", async () => {
    await fc.assert(
      fc.asyncProperty(dataSet, dataSet, fc.integer({ min: 1, max: 4 }), shuffler, async (oldData, newData, pageSize, shuffle) => {
        const t = tempStore();
        try {
          const policy = { allowDeletes: true };
          const r1 = await syncStarted({ source: memorySource(() => oldData, { pageSize, shuffle }), store: t.store, claimsWindow: window, deletePolicy: policy });
          expect(r1.status).toBe("succeeded");
          const before = snapshotState(t.db);
          expect(stateToObject(before)).toEqual(stateToObject(expectedState(oldData, TEST_PII_KEY)));
          const r2 = await syncStarted({ source: memorySource(() => newData, { pageSize, shuffle }), store: t.store, claimsWindow: window, deletePolicy: policy });
          expect(r2.status).toBe("succeeded");
          const after = snapshotState(t.db);
          expect(stateToObject(after)).toEqual(stateToObject(expectedState(newData, TEST_PII_KEY)));
          expect(recordedChanges(t.db, r2.runId)).toEqual(diffStates(expectedState(oldData, TEST_PII_KEY), expectedState(newData, TEST_PII_KEY)));
          const noOps = t.db.prepare("SELECT COUNT(*) FROM changes WHERE op = 'update' AND (changed_fields IS NULL OR changed_fields = '[]')").pluck().get();
          expect(noOps).toBe(0);
        } finally {
          t.cleanup();
        }
      }),
      { numRuns: 60 },
    );
  });
});
