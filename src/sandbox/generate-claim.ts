/**
 * Claims derived from their slot. Slot = day * slotsPerDay + group.claimOffset + k, so claims are
 * ordered by the day they were received (createdAt), a group's claims for a day are contiguous, and
 * a group-filtered walk touches only its own slots.
 */
import { dayStartMs, isoDay, isoTime } from "./dates.js";
import { encodeId } from "./ids.js";
import { CPT_CODES, DENIAL_REASONS } from "./names.js";
import { Kind, rngFor } from "./prng.js";
import { money, type ClaimLineRec, type ClaimRec } from "./records.js";
import { coverageId, householdAt, memberId } from "./generate-member.js";
import { CLAIM_SLOT_FILL, SLOTS_PER_HOUSEHOLD, groupOfClaimOffset, type World } from "./world.js";

export const claimId = (world: World, idx: number): string => encodeId(world.seed, Kind.claim, idx);

/** The createdAt (epoch ms) of claim slot `idx`: strictly increasing with the slot. */
export function claimCreatedMs(world: World, idx: number): number {
  const day = Math.floor(idx / world.claimSlotsPerDay);
  const j = idx - day * world.claimSlotsPerDay;
  return dayStartMs(world.claimFirstDay + day) + 6 * 3_600_000 + j * world.claimStepMs;
}

/** The generated claim of slot `idx`, or undefined for an empty slot. */
export function generateClaim(world: World, idx: number): ClaimRec | undefined {
  if (idx < 0 || idx >= world.totalClaimSlots) return undefined;
  const rng = rngFor(world.seed, Kind.claim, idx);
  if (!rng.chance(CLAIM_SLOT_FILL)) return undefined;
  const day = Math.floor(idx / world.claimSlotsPerDay);
  const j = idx - day * world.claimSlotsPerDay;
  const group = groupOfClaimOffset(world, j);
  const hhCount = group.hhEnd - group.hhStart;
  if (hhCount <= 0) return undefined;
  const hh = householdAt(world, group.hhStart + rng.int(hhCount));
  const pos = rng.int(hh.size);
  const slot = hh.h * SLOTS_PER_HOUSEHOLD + pos;
  const receivedDay = world.claimFirstDay + day;
  const lag = Math.min(rng.int(8) + rng.int(8), 13);
  const from = receivedDay - lag;
  // No claim outside the member's coverage: a stay that would run past the coverage's end ends with it.
  const to = Math.min(rng.chance(0.8) ? from : Math.min(receivedDay, from + rng.range(1, 4)), hh.endDay >= 0 ? hh.endDay : Infinity);
  if (from < hh.startDay || (hh.endDay >= 0 && from > hh.endDay)) return undefined;

  const nLines = rng.chance(0.1) ? 4 : rng.range(1, 3);
  const lines: ClaimLineRec[] = [];
  let total = 0;
  for (let i = 0; i < nLines; i++) {
    const cents = rng.chance(0.05) ? rng.range(100_000, 2_500_000) : rng.range(2_500, 60_000);
    total += cents;
    lines.push({ code: rng.pick(CPT_CODES), amount: money(cents) });
  }
  const allowed = Math.round(total * (0.55 + 0.35 * rng.next()));
  const adjDay = receivedDay + rng.range(2, 20);
  const denied = rng.chance(0.15);
  const denialReason = rng.pick(DENIAL_REASONS);
  const pending = adjDay >= world.genesisDay;
  const plan = group.rec.plans[hh.planIdx] ?? group.rec.plans[0];
  const status = pending ? "pending" : denied ? "denied" : "paid";
  return {
    id: claimId(world, idx),
    claimNumber: `C${isoDay(receivedDay).replaceAll("-", "")}${String(j).padStart(6, "0")}`,
    memberId: memberId(world, slot),
    coverageId: coverageId(world, slot, false),
    groupId: group.rec.groupId,
    planId: plan?.id ?? "",
    serviceDateFrom: isoDay(from),
    serviceDateTo: isoDay(to),
    claimStatus: status,
    claimAmount: money(total),
    allowedAmount: pending ? null : denied ? "0.00" : money(allowed),
    paidAmount: pending ? null : denied ? "0.00" : money(Math.round(allowed * 0.8)),
    processing: {
      receivedDate: isoDay(receivedDay),
      adjudicatedDate: pending ? null : isoDay(adjDay),
      paidDate: status === "paid" ? isoDay(adjDay) : null,
      denialReason: status === "denied" ? denialReason : null,
    },
    lines,
    createdAt: isoTime(claimCreatedMs(world, idx)),
  };
}
