import { z } from "zod";
import { Id, IsoDate, IsoTimestamp, opt } from "./common.js";

export const CoverageStatuses = ["active", "terminated", "pending"] as const;
export const CoverageStatus = z.enum(CoverageStatuses);
export type CoverageStatus = z.infer<typeof CoverageStatus>;

export const Address = z.looseObject({
  line1: opt(z.string()),
  line2: opt(z.string()),
  city: opt(z.string()),
  state: opt(z.string()),
  zip: opt(z.string()),
});
export type Address = z.infer<typeof Address>;

/** One instance of a member on a plan. `id` is the coverageId (UUID). */
export const Coverage = z.looseObject({
  id: Id,
  groupId: opt(z.string()),
  groupPolicyId: opt(z.string()),
  planId: opt(z.string()),
  subscriberCoverageId: opt(z.string()),
  startDate: opt(IsoDate),
  endDate: opt(IsoDate),
  // A status the service adds later must not fail a whole walk: unknown strings pass.
  status: opt(z.string()),
});
export type Coverage = z.infer<typeof Coverage>;

/** A member (`GET /v2/members`, `GET /v1/members/{id}`). `id` is the memberId (UUID). */
export const Member = z.looseObject({
  id: Id,
  subscriberId: opt(z.string()),
  firstName: opt(z.string()),
  lastName: opt(z.string()),
  dateOfBirth: opt(IsoDate),
  ssn: opt(z.string()),
  gender: opt(z.string()),
  memberType: opt(z.string()),
  relationship: opt(z.string()),
  email: opt(z.string()),
  phone: opt(z.string()),
  address: opt(Address),
  createdAt: opt(IsoTimestamp),
  coverages: z.array(Coverage).nullish(),
});
export type Member = z.infer<typeof Member>;
