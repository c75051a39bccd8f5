import { z } from "zod";
import { Id, IsoTimestamp, opt } from "./common.js";

export const EnrollmentRequestStatuses = ["pending", "processing", "succeeded", "failed"] as const;
export const EnrollmentRequestStatus = z.enum(EnrollmentRequestStatuses);
export type EnrollmentRequestStatus = z.infer<typeof EnrollmentRequestStatus>;

/** `GET /v1/enrollmentRequests/{id}`: an asynchronous enrollment submission. */
export const EnrollmentRequest = z.looseObject({
  id: Id,
  status: EnrollmentRequestStatus,
  createdAt: opt(IsoTimestamp),
  completedAt: opt(IsoTimestamp),
  errors: z.array(z.unknown()).nullish(),
});
export type EnrollmentRequest = z.infer<typeof EnrollmentRequest>;

/** The 202 answer of add-subscriber and add-dependent. */
export const EnrollmentRequestAccepted = z.looseObject({ enrollmentRequestId: Id });
export type EnrollmentRequestAccepted = z.infer<typeof EnrollmentRequestAccepted>;
