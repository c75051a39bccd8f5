/**
 * The list endpoints' walk order and filters, as generators from a cursor. Order is createdAt then
 * id: generated records by slot (createdAt grows with the slot), then new records in creation order.
 * A filter on a group narrows the slot range to that group's households; the rest is a cheap scan.
 */
import { dayNum } from "./dates.js";
import { decodeId } from "./ids.js";
import { Kind } from "./prng.js";
import type { ClaimRec, DesignRec, GroupRec, MemberRec } from "./records.js";
import type { SandboxState } from "./state.js";
import { CLAIM_DAYS, SLOTS_PER_HOUSEHOLD, groupOfHousehold, type GroupInfo } from "./world.js";

/** `startAfter` names no record this list has ever served. */
export class CursorError extends Error {}

export interface MemberFilter {
  groupId?: string | undefined;
  planId?: string | undefined;
  effectiveDate?: string | undefined;
  terminationDate?: string | undefined;
  status?: string | undefined;
}

export interface ClaimFilter {
  groupId?: string | undefined;
  memberId?: string | undefined;
  serviceDateFrom?: string | undefined;
  serviceDateTo?: string | undefined;
}

/** Longest gap between a claim's service date and the day it was received (generate-claim.ts). */
const MAX_CLAIM_LAG = 13;

/**
 * Whether a member matches the coverage filters: some coverage satisfies all of them at once.
 * `effectiveDate` keeps coverages starting on or after it, `terminationDate` those ending on or before it.
 */
export function memberMatches(m: MemberRec, f: MemberFilter): boolean {
  if (!f.groupId && !f.planId && !f.effectiveDate && !f.terminationDate && !f.status) return true;
  return m.coverages.some(
    (c) =>
      (!f.groupId || c.groupId === f.groupId) &&
      (!f.planId || c.planId === f.planId) &&
      (!f.status || c.status === f.status) &&
      (!f.effectiveDate || c.startDate >= f.effectiveDate) &&
      (!f.terminationDate || (c.endDate !== null && c.endDate <= f.terminationDate)),
  );
}

export function claimMatches(c: ClaimRec, f: ClaimFilter): boolean {
  return (
    (!f.groupId || c.groupId === f.groupId) &&
    (!f.memberId || c.memberId === f.memberId) &&
    (!f.serviceDateFrom || c.serviceDateFrom >= f.serviceDateFrom) &&
    (!f.serviceDateTo || c.serviceDateFrom <= f.serviceDateTo)
  );
}

function groupInfoByNumber(state: SandboxState, groupId: string): GroupInfo | undefined {
  const g = state.groupByNumber(groupId);
  return g ? state.groupInfo.get(g.id) : undefined;
}

function groupOfPlan(state: SandboxState, planId: string): GroupRec | undefined {
  return state.groups.find((g) => g.plans.some((p) => p.id === planId));
}

/** Members in walk order after `startAfter`, filtered. Throws CursorError on an unknown cursor. */
export function* memberStream(state: SandboxState, f: MemberFilter, startAfter?: string): Generator<MemberRec> {
  let lo = 0;
  let hi = state.world.totalSlots;
  const numbers = new Set<string>();
  if (f.groupId) numbers.add(f.groupId);
  if (f.planId) numbers.add(groupOfPlan(state, f.planId)?.groupId ?? "\u0000none");
  for (const n of numbers) {
    const info = groupInfoByNumber(state, n);
    if (!info) hi = lo;
    else {
      lo = Math.max(lo, info.hhStart * SLOTS_PER_HOUSEHOLD);
      hi = Math.min(hi, info.hhEnd * SLOTS_PER_HOUSEHOLD);
    }
  }
  let genStart = lo;
  let addedStart = 0;
  if (startAfter !== undefined) {
    const loc = state.members.locate(startAfter);
    if (!loc) throw new CursorError(`startAfter ${startAfter} does not name a member`);
    if ("gen" in loc) genStart = Math.max(lo, loc.gen + 1);
    else {
      genStart = hi;
      addedStart = loc.added + 1;
    }
  }
  for (let s = genStart; s < hi; s++) {
    const m = state.members.bySlot(s);
    if (m && memberMatches(m, f)) yield m;
  }
  const added = state.members.added;
  for (let p = addedStart; p < added.length; p++) {
    const m = added[p];
    if (m && memberMatches(m, f)) yield m;
  }
}

/** Claims in walk order after `startAfter`, filtered. Throws CursorError on an unknown cursor. */
export function* claimStream(state: SandboxState, f: ClaimFilter, startAfter?: string): Generator<ClaimRec> {
  const w = state.world;
  const S = w.claimSlotsPerDay;
  let only: GroupInfo | undefined;
  let none = S === 0;
  if (f.groupId) {
    const info = groupInfoByNumber(state, f.groupId);
    if (!info || info.kind !== "current") none = true;
    else only = info;
  }
  if (f.memberId) {
    // Claims outlive a deleted member, so the owner is found from the id, not from the live record.
    const slot = decodeId(w.seed, Kind.member, f.memberId);
    if (slot === undefined || slot >= w.totalSlots) none = true;
    else {
      const g = groupOfHousehold(w, Math.floor(slot / SLOTS_PER_HOUSEHOLD));
      if (only && only !== g) none = true;
      only = g;
    }
  }
  const dFrom = f.serviceDateFrom ? Math.max(0, dayNum(f.serviceDateFrom) - w.claimFirstDay) : 0;
  const dTo = f.serviceDateTo ? Math.min(CLAIM_DAYS - 1, dayNum(f.serviceDateTo) + MAX_CLAIM_LAG - w.claimFirstDay) : CLAIM_DAYS - 1;
  let after = -1;
  let addedStart = 0;
  if (startAfter !== undefined) {
    const loc = state.claims.locate(startAfter);
    if (!loc) throw new CursorError(`startAfter ${startAfter} does not name a claim`);
    if ("gen" in loc) after = loc.gen;
    else {
      none = true;
      addedStart = loc.added + 1;
    }
  }
  if (!none && dFrom <= dTo) {
    if (only) {
      for (let d = Math.max(dFrom, Math.floor((after + 1) / S)); d <= dTo; d++) {
        const base = d * S + only.claimOffset;
        for (let k = 0; k < only.claimSlots; k++) {
          const idx = base + k;
          if (idx <= after) continue;
          const c = state.claims.bySlot(idx);
          if (c && claimMatches(c, f)) yield c;
        }
      }
    } else {
      const end = (dTo + 1) * S;
      for (let idx = Math.max(dFrom * S, after + 1); idx < end; idx++) {
        const c = state.claims.bySlot(idx);
        if (c && claimMatches(c, f)) yield c;
      }
    }
  }
  const added = state.claims.added;
  for (let p = addedStart; p < added.length; p++) {
    const c = added[p];
    if (c && claimMatches(c, f)) yield c;
  }
}

function* arrayStream<T extends { id: string }>(items: readonly T[], startAfter: string | undefined, what: string): Generator<T> {
  let start = 0;
  if (startAfter !== undefined) {
    const i = items.findIndex((x) => x.id === startAfter);
    if (i < 0) throw new CursorError(`startAfter ${startAfter} does not name a ${what}`);
    start = i + 1;
  }
  for (let i = start; i < items.length; i++) yield items[i] as T;
}

export const groupStream = (state: SandboxState, startAfter?: string): Generator<GroupRec> => {
  const pos = startAfter === undefined ? undefined : state.groupPos.get(startAfter);
  if (startAfter !== undefined && pos === undefined) throw new CursorError(`startAfter ${startAfter} does not name a group`);
  return (function* () {
    for (let i = pos === undefined ? 0 : pos + 1; i < state.groups.length; i++) yield state.groups[i] as GroupRec;
  })();
};

export const designStream = (state: SandboxState, startAfter?: string): Generator<DesignRec> => arrayStream(state.designs, startAfter, "plan design");

export interface PageOf<T> {
  items: T[];
  hasMore: boolean;
}

/** Take one page from a stream, looking one item ahead to answer `hasMore`. */
export function takePage<T>(stream: Iterator<T>, size: number): PageOf<T> {
  const items: T[] = [];
  while (items.length < size) {
    const r = stream.next();
    if (r.done) return { items, hasMore: false };
    items.push(r.value);
  }
  return { items, hasMore: !stream.next().done };
}
