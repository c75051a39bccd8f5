/**
 * A schedule: the service's starting data, then days; each day some changes of the service, a
 * possible server bug, and one to three runs, each with its faults (HTTP, store, crash, changes
 * landing mid-walk, a sink that is down). fast-check generates and shrinks it; the details
 * (names, SSNs, which request fails) come from streams seeded by `seed`.
 */
import fc from "fast-check";
import { OpKinds, type ModelInit, type Op, type OpKind } from "./model.js";
import type { HasMoreStyle } from "./server.js";
import type { StoreRunFaults } from "./world.js";

export interface RunSpec {
  readonly level: 0 | 1 | 2;
  readonly midWalk: readonly { readonly after: number; readonly op: Op }[];
  readonly store: StoreRunFaults;
  /** The sink is down when this run's deltas are delivered. */
  readonly deliveryFails: boolean;
  /** After a run the delete guard stopped, the operator runs this one with --allow-deletes. */
  readonly operatorAllowsDeletes: boolean;
}

export interface DaySpec {
  readonly ops: readonly Op[];
  /** A server bug all day: a member cursor past the second page starts the list over. */
  readonly cursorBug: boolean;
  readonly runs: readonly RunSpec[];
}

export interface Schedule {
  readonly seed: number;
  readonly init: ModelInit;
  /** The sync prepares pages and recognises known ones by their bytes (the worker-thread path). */
  readonly encodeOnCaller: boolean;
  readonly commitEveryPages: number;
  readonly hasMore: HasMoreStyle;
  readonly days: readonly DaySpec[];
  /**
   * Not drawn by fast-check (so a seed's schedule is what it was): set by a replay. `narrow`: the
   * store on this thread and one group at a time, as the schedules were run when the regression
   * seeds were found. `quietDeliveries`: no output down and no crash while delivering.
   */
  readonly narrow?: boolean;
  readonly quietDeliveries?: boolean;
  /** Webhook events on (true) or off (false) for this replay; unset: drawn from the seed (webhooks.ts). */
  readonly webhooks?: boolean;
  /** Outside readers on (true) or off (false) for this replay; unset: drawn from the seed (outside.ts). */
  readonly outside?: boolean;
}

const OP_WEIGHTS: Record<OpKind, number> = {
  designUpdate: 1,
  groupUpdate: 1,
  groupAdd: 1,
  groupDelete: 1,
  planAdd: 1,
  planRemove: 1,
  planUpdate: 1,
  plansRemoveAll: 1,
  memberInsert: 3,
  memberUpdate: 4,
  memberDelete: 2,
  memberDeleteMany: 1,
  memberReinstate: 2,
  coverageAdd: 2,
  coverageTerminate: 2,
  coverageRemove: 2,
  coverageMove: 3,
  coverageRemoveMany: 1,
  claimInsert: 3,
  claimUpdate: 3,
  claimDelete: 2,
  claimDeleteMany: 1,
  claimMoveDate: 3,
  pageSize: 2,
  keyOrder: 1,
};

/** `arb` with probability `p`, else null (shrinks towards null: no fault). */
function sometimes<T>(arb: fc.Arbitrary<T>, p: number): fc.Arbitrary<T | null> {
  return fc.oneof({ weight: Math.round((1 - p) * 100), arbitrary: fc.constant(null) }, { weight: Math.round(p * 100), arbitrary: arb });
}

function weighted(p: number): fc.Arbitrary<boolean> {
  return fc.oneof({ weight: Math.round((1 - p) * 100), arbitrary: fc.constant(false) }, { weight: Math.round(p * 100), arbitrary: fc.constant(true) });
}

export const opArb: fc.Arbitrary<Op> = fc.record({
  kind: fc.oneof(...OpKinds.map((k) => ({ weight: OP_WEIGHTS[k], arbitrary: fc.constant(k) }))),
  a: fc.nat(9999),
  b: fc.nat(9999),
  c: fc.nat(9999),
});

export const runArb: fc.Arbitrary<RunSpec> = fc.record({
  level: fc.oneof({ weight: 1, arbitrary: fc.constant(0 as const) }, { weight: 3, arbitrary: fc.constant(1 as const) }, { weight: 2, arbitrary: fc.constant(2 as const) }),
  midWalk: fc.array(fc.record({ after: fc.integer({ min: 1, max: 40 }), op: opArb }), { maxLength: 3 }),
  store: fc.record({
    lock: sometimes(fc.record({ at: fc.integer({ min: 1, max: 30 }), hold: fc.integer({ min: 1, max: 4 }), commit: fc.boolean() }), 0.25),
    io: sometimes(fc.record({ at: fc.integer({ min: 1, max: 30 }), rollback: fc.boolean() }), 0.2),
    crash: sometimes(fc.record({ at: fc.integer({ min: 0, max: 40 }) }), 0.2),
  }),
  deliveryFails: weighted(0.25),
  operatorAllowsDeletes: weighted(0.5),
});

export const dayArb: fc.Arbitrary<DaySpec> = fc.record({
  ops: fc.array(opArb, { maxLength: 10 }),
  cursorBug: weighted(0.12),
  runs: fc.array(runArb, { minLength: 1, maxLength: 3 }),
});

export const scheduleArb: fc.Arbitrary<Schedule> = fc.record({
  seed: fc.integer({ min: 0, max: 0x7fffffff }),
  init: fc.record({
    designs: fc.integer({ min: 1, max: 3 }),
    groups: fc.integer({ min: 2, max: 4 }),
    members: fc.integer({ min: 10, max: 40 }),
    claims: fc.integer({ min: 5, max: 40 }),
    twoGroupPct: fc.integer({ min: 0, max: 50 }),
    pageSizes: fc.record({
      designs: fc.integer({ min: 1, max: 4 }),
      groups: fc.integer({ min: 1, max: 4 }),
      members: fc.integer({ min: 2, max: 8 }),
      claims: fc.integer({ min: 2, max: 8 }),
    }),
  }),
  encodeOnCaller: weighted(0.75),
  commitEveryPages: fc.constantFrom(1, 2, 3, 5, 32),
  hasMore: fc.constantFrom<HasMoreStyle>("flag", "empty", "mixed"),
  days: fc.array(dayArb, { minLength: 1, maxLength: 5 }),
});

/** A quiet run: no fault of any kind, no change landing mid-walk. */
export const QUIET: RunSpec = {
  level: 0,
  midWalk: [],
  store: { lock: null, io: null, crash: null },
  deliveryFails: false,
  operatorAllowsDeletes: false,
};
