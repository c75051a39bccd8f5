import { z } from "zod";
import { Id, IsoDate, IsoTimestamp, opt } from "./common.js";

/** A plan attached to one group; `id` is the planId, `basePlanDesignId` the design it came from. */
export const Plan = z.looseObject({
  id: Id,
  name: opt(z.string()),
  basePlanDesignId: opt(z.string()),
  benefitBundleId: opt(z.string()),
  vendorId: opt(z.string()),
});
export type Plan = z.infer<typeof Plan>;

/** A group (`GET /v2/groups`): a sponsor in one plan year. `id` is the groupPolicyId, `groupId` the group number. */
export const Group = z.looseObject({
  id: Id,
  groupId: opt(z.string()),
  sponsorId: opt(z.string()),
  sponsorName: opt(z.string()),
  ein: opt(z.string()),
  adminEmail: opt(z.string()),
  effectiveDate: opt(IsoDate),
  terminationDate: opt(IsoDate),
  onboardingStatus: opt(z.string()),
  createdAt: opt(IsoTimestamp),
  plans: z.array(Plan).nullish(),
});
export type Group = z.infer<typeof Group>;
