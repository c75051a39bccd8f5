import { z } from "zod";
import { DecimalString, Id, IsoDate, IsoTimestamp, opt } from "./common.js";

export const ClaimLine = z.looseObject({
  code: opt(z.string()),
  amount: opt(DecimalString),
});
export type ClaimLine = z.infer<typeof ClaimLine>;

export const ClaimProcessing = z.looseObject({
  receivedDate: opt(IsoDate),
  adjudicatedDate: opt(IsoDate),
  paidDate: opt(IsoDate),
  denialReason: opt(z.string()),
});
export type ClaimProcessing = z.infer<typeof ClaimProcessing>;

/** A medical claim (`GET /v1/claims/medical`). Amounts are decimal strings, never floats. */
export const MedicalClaim = z.looseObject({
  id: Id,
  claimNumber: opt(z.string()),
  memberId: opt(z.string()),
  coverageId: opt(z.string()),
  groupId: opt(z.string()),
  planId: opt(z.string()),
  serviceDateFrom: opt(IsoDate),
  serviceDateTo: opt(IsoDate),
  claimStatus: opt(z.string()),
  claimAmount: opt(DecimalString),
  allowedAmount: opt(DecimalString),
  paidAmount: opt(DecimalString),
  processing: opt(ClaimProcessing),
  lines: z.array(ClaimLine).nullish(),
  createdAt: opt(IsoTimestamp),
});
export type MedicalClaim = z.infer<typeof MedicalClaim>;
