import { z } from "zod";
import { Address, Coverage, Member } from "./member.js";
import { IsoDate } from "./common.js";

/** `POST /v2/groups`: the nine fields of the spec. */
export const CreateGroupBody = z.looseObject({
  groupId: z.string().min(1),
  adminEmail: z.email(),
  sponsorName: z.string().min(1),
  ein: z.string().regex(/^\d{2}-?\d{7}$/, "expected an EIN such as 12-3456789"),
  planDesignId: z.string().min(1),
  benefitBundleId: z.string().min(1),
  vendorId: z.string().min(1),
  effectiveDate: IsoDate,
  terminationDate: IsoDate,
});
export type CreateGroupBody = z.infer<typeof CreateGroupBody>;

/** A person as the enrollment writes send it. */
export const EnrolleeInput = z.looseObject({
  memberId: z.string().min(1).optional(),
  firstName: z.string().min(1),
  lastName: z.string().min(1),
  dateOfBirth: IsoDate,
  ssn: z.string().regex(/^\d{3}-?\d{2}-?\d{4}$/, "expected an SSN of 9 digits"),
  memberType: z.string().min(1),
  gender: z.string().optional(),
  relationship: z.string().optional(),
  address: Address.optional(),
  email: z.string().optional(),
  phone: z.string().optional(),
});
export type EnrolleeInput = z.infer<typeof EnrolleeInput>;

/** `POST /v2/groups/{groupPolicyId}/enroll/initial-enrollment`. */
export const InitialEnrollmentBody = z.looseObject({
  members: z.array(EnrolleeInput.extend({ memberId: z.string().min(1) })).min(1),
});
export type InitialEnrollmentBody = z.infer<typeof InitialEnrollmentBody>;

export const InitialEnrollmentResult = z.looseObject({
  enrolled: z.number().int(),
  members: z.array(Member),
});
export type InitialEnrollmentResult = z.infer<typeof InitialEnrollmentResult>;

/** One entry of `POST /v3/groups/{groupPolicyId}/enroll/add-subscriber`. */
export const SubscriberEntry = z.looseObject({
  plan: z.string().min(1),
  self: EnrolleeInput,
  spouse: EnrolleeInput.optional(),
  children: z.array(EnrolleeInput).optional(),
  tags: z.array(z.string()).optional(),
});
export type SubscriberEntry = z.infer<typeof SubscriberEntry>;

export const AddSubscriberBody = z.looseObject({ subscribers: z.array(SubscriberEntry).min(1) });
export type AddSubscriberBody = z.infer<typeof AddSubscriberBody>;

/** `POST /v3/groups/{groupPolicyId}/enroll/{subscriberCoverageId}/add-dependent`. */
export const AddDependentBody = z.looseObject({ plan: z.string().min(1), dependent: EnrolleeInput });
export type AddDependentBody = z.infer<typeof AddDependentBody>;

/** `POST /v3/groups/{groupPolicyId}/enroll/terminate`; answers with the terminated coverage. */
export const TerminateBody = z.looseObject({
  memberId: z.string().min(1),
  coverageId: z.string().min(1).optional(),
  terminationDate: IsoDate,
  reason: z.string().optional(),
});
export type TerminateBody = z.infer<typeof TerminateBody>;
export const TerminateResult = Coverage;

/** `PATCH /v2/members/{memberId}`: any subset of the demographic fields. */
export const PatchMemberBody = z.looseObject({
  firstName: z.string().min(1).optional(),
  lastName: z.string().min(1).optional(),
  dateOfBirth: IsoDate.optional(),
  gender: z.string().optional(),
  email: z.string().optional(),
  phone: z.string().optional(),
  address: Address.optional(),
});
export type PatchMemberBody = z.infer<typeof PatchMemberBody>;
