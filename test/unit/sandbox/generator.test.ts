import { describe, expect, it } from "vitest";
import { generateClaim } from "../../../src/sandbox/generate-claim.js";
import { generateMember } from "../../../src/sandbox/generate-member.js";
import { decodeId, encodeId, randomUuid } from "../../../src/sandbox/ids.js";
import { Kind, Rng } from "../../../src/sandbox/prng.js";
import { dayNum, isoDay, isoTime } from "../../../src/sandbox/dates.js";
import { SLOTS_PER_HOUSEHOLD, buildWorld } from "../../../src/sandbox/world.js";
import { SandboxState } from "../../../src/sandbox/state.js";
import { claimStream, memberStream } from "../../../src/sandbox/listing.js";
import type { ClaimRec, MemberRec } from "../../../src/sandbox/records.js";

const opts = { seed: 11, members: 6_000, groups: 12, claimsPerMember: 3, today: "2026-01-15" };

function allMembers(world = buildWorld(opts)): MemberRec[] {
  return [...memberStream(new SandboxState(world), {})];
}

describe("ids", () => {
  it("round-trips indexes and rejects ids of another seed or kind", () => {
    for (const i of [0, 1, 99, 12_345, 2 ** 24 + 7, 2 ** 40 + 3]) {
      const id = encodeId(5, Kind.member, i);
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(decodeId(5, Kind.member, id)).toBe(i);
      expect(decodeId(6, Kind.member, id)).toBeUndefined();
      expect(decodeId(5, Kind.claim, id)).toBeUndefined();
    }
    const r = randomUuid(new Rng(1));
    expect(decodeId(5, Kind.member, r)).toBeUndefined();
    expect(decodeId(5, Kind.member, "not-an-id")).toBeUndefined();
  });
  it("are the same from one version to the next (a snapshot made against an older sandbox still matches)", () => {
    expect(encodeId(42, Kind.member, 12_345)).toBe("7ca87854-056f-4dec-9056-8459949e9d7f");
    expect(encodeId(42, Kind.coverage, 2 ** 40 + 7)).toBe("17a28134-f2b0-4a00-9f2b-0df9fadd2a48");
    expect(randomUuid(new Rng(3))).toBe("b860c852-09e5-436b-94c9-02f4132e7b67");
  });
  it("formats dates and times like Date#toISOString", () => {
    for (const ms of [0, 1_700_000_000_123, 951_782_400_000, -631_152_000_000 + 5]) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    expect(isoDay(dayNum("2024-02-29"))).toBe("2024-02-29");
  });
});

describe("generator", () => {
  it("is deterministic per seed and differs across seeds", () => {
    const a = buildWorld(opts);
    const b = buildWorld(opts);
    const c = buildWorld({ ...opts, seed: 12 });
    for (const slot of [0, 1, 2, 500, 4321]) expect(JSON.stringify(generateMember(a, slot))).toBe(JSON.stringify(generateMember(b, slot)));
    expect(JSON.stringify(generateMember(a, 0))).not.toBe(JSON.stringify(generateMember(c, 0)));
    expect(JSON.stringify(generateClaim(a, 77))).toBe(JSON.stringify(generateClaim(b, 77)));
  });

  it("generates about the requested number of members, believable and varied", () => {
    const members = allMembers();
    expect(members.length).toBeGreaterThan(5_400);
    expect(members.length).toBeLessThan(6_600);
    expect(new Set(members.map((m) => m.id)).size).toBe(members.length);
    const bad = members.filter((m) => !/^\d{3}-\d{2}-\d{4}$/.test(m.ssn) || isoDay(dayNum(m.dateOfBirth)) !== m.dateOfBirth || m.coverages.length === 0);
    expect(bad).toEqual([]);
    expect(members.some((m) => m.dateOfBirth.endsWith("-02-29"))).toBe(true);
    expect(members.some((m) => /[^\x00-\x7f]/.test(m.firstName + m.lastName))).toBe(true);
    expect(members.some((m) => m.lastName.includes("'"))).toBe(true);
    const rel = new Set(members.map((m) => m.relationship));
    expect([...rel].sort()).toEqual(["child", "self", "spouse"]);
    const statuses = new Set(members.flatMap((m) => m.coverages.map((c) => c.status)));
    expect([...statuses].sort()).toEqual(["active", "pending", "terminated"]);
    // About 1% of members are seen in two groups (a renewal: last year's coverage ended, a new one).
    const twoGroups = members.filter((m) => new Set(m.coverages.map((c) => c.groupId)).size === 2).length;
    expect(twoGroups / members.length).toBeGreaterThan(0.003);
    expect(twoGroups / members.length).toBeLessThan(0.03);
    // Every dependent points at its subscriber's coverage.
    const covIds = new Set(members.flatMap((m) => m.coverages.map((c) => c.id)));
    expect(members.flatMap((m) => m.coverages).filter((c) => !covIds.has(c.subscriberCoverageId))).toEqual([]);
  });

  it("keeps createdAt strictly increasing in walk order", () => {
    const members = allMembers();
    expect(members.filter((m, i) => i > 0 && !(m.createdAt > (members[i - 1] as MemberRec).createdAt))).toEqual([]);
    const claims = [...claimStream(new SandboxState(buildWorld(opts)), {})];
    expect(claims.length).toBeGreaterThan(1000);
    expect(claims.filter((c, i) => i > 0 && !(c.createdAt > (claims[i - 1] as ClaimRec).createdAt))).toEqual([]);
  });

  it("generates claims with decimal-string amounts, lines that add up, dates in the last ~180 days", () => {
    const world = buildWorld(opts);
    const claims = [...claimStream(new SandboxState(world), {})];
    const perMember = claims.length / allMembers(world).length;
    expect(perMember).toBeGreaterThan(2);
    expect(perMember).toBeLessThan(4);
    const today = dayNum(opts.today);
    const groupNumbers = new Set(world.groups.map((g) => g.rec.groupId));
    const bad = claims.filter((c) => {
      const amountsOk = [c.claimAmount, c.allowedAmount, c.paidAmount, ...c.lines.map((l) => l.amount)].every((a) => a === null || /^\d+\.\d{2}$/.test(a));
      const cents = c.lines.reduce((s, l) => s + Math.round(Number(l.amount) * 100), 0);
      const from = dayNum(c.serviceDateFrom);
      return !amountsOk || cents !== Math.round(Number(c.claimAmount) * 100) || from < today - 200 || from >= today || c.serviceDateTo < c.serviceDateFrom || !groupNumbers.has(c.groupId);
    });
    expect(bad).toEqual([]);
    expect(new Set(claims.map((c) => c.claimStatus))).toEqual(new Set(["pending", "paid", "denied"]));
  });

  it("builds groups per plan year with plans from designs", () => {
    const world = buildWorld(opts);
    const designIds = new Set(world.designs.map((d) => d.id));
    const numbers = new Set<string>();
    for (const g of world.groups) {
      expect(g.rec.ein).toMatch(/^\d{2}-\d{7}$/);
      expect(numbers.has(g.rec.groupId)).toBe(false);
      numbers.add(g.rec.groupId);
      for (const p of g.rec.plans) expect(designIds.has(p.basePlanDesignId)).toBe(true);
    }
    // Renewed sponsors: the same EIN and sponsor in two groups with adjacent, non-overlapping years.
    const prior = world.groups.find((g) => g.kind === "prior");
    expect(prior?.renewedInto?.rec.ein).toBe(prior?.rec.ein);
    expect(prior && prior.rec.terminationDate < (prior.renewedInto?.rec.effectiveDate ?? "")).toBe(true);
  });

  it("starts a 1,000,000-member world in O(groups) and resumes a cursor deep in the list at once", () => {
    const world = buildWorld({ ...opts, members: 1_000_000, groups: 2000 });
    const state = new SandboxState(world);
    expect(state.members.overrides.size + state.members.added.length).toBe(0);
    const deep = generateMember(world, world.totalSlots - SLOTS_PER_HOUSEHOLD) as MemberRec;
    const next = memberStream(state, {}, deep.id).next().value as MemberRec | undefined;
    expect(next === undefined || next.createdAt > deep.createdAt).toBe(true);
    const groupNumber = world.current[1400]?.rec.groupId as string;
    const first = memberStream(state, { groupId: groupNumber }).next().value as MemberRec;
    expect(first.coverages.some((c) => c.groupId === groupNumber)).toBe(true);
  });
});
