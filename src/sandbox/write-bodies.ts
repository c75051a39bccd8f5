/**
 * The request bodies the sandbox's write endpoints accept: its own reading of the spec, written
 * here and not imported from the client's schemas. Were it the client's, the sandbox would agree
 * with the client by construction and a shape mismatch between them could never fail a test.
 * Where the spec names fields (create group, initial enrollment, add-subscriber) they are required
 * as it says; where it shows none (add-dependent, terminate, update-member) this is the project's
 * written reading of the wire shapes; unknown fields are accepted, as a service adding fields would.
 */
import { z } from "zod";
import { isValidIsoDay } from "./dates.js";
import { HttpError, zodIssues } from "./http-util.js";

const text = z.string().min(1);
const day = z.string().refine(isValidIsoDay, "expected a calendar date YYYY-MM-DD");

const Address = z.looseObject({
  line1: z.string().optional(),
  line2: z.string().nullish(),
  city: z.string().optional(),
  state: z.string().optional(),
  zip: z.string().optional(),
});

/** A person in an enrollment write. The spec's required fields, address and contact optional. */
const Person = z.looseObject({
  memberId: text.optional(),
  firstName: text,
  lastName: text,
  dateOfBirth: day,
  ssn: z.string().regex(/^\d{3}-?\d{2}-?\d{4}$/, "expected 9 digits, as 123-45-6789 or 123456789"),
  memberType: text,
  gender: z.string().optional(),
  relationship: z.string().optional(),
  address: Address.optional(),
  email: z.string().optional(),
  phone: z.string().optional(),
});
export type PersonInput = z.infer<typeof Person>;

/** POST /v2/groups: the nine fields the spec lists. */
const CreateGroup = z.looseObject({
  groupId: text,
  adminEmail: z.email(),
  sponsorName: text,
  ein: z.string().regex(/^\d{2}-?\d{7}$/, "expected an EIN of 9 digits, as 12-3456789"),
  planDesignId: text,
  benefitBundleId: text,
  vendorId: text,
  effectiveDate: day,
  terminationDate: day,
});

const InitialEnrollment = z.looseObject({ members: z.array(Person.extend({ memberId: text })).min(1) });

const AddSubscriber = z.looseObject({
  subscribers: z
    .array(z.looseObject({ plan: text, self: Person, spouse: Person.optional(), children: z.array(Person).optional(), tags: z.array(z.string()).optional() }))
    .min(1),
});

const AddDependent = z.looseObject({ plan: text, dependent: Person });

const Terminate = z.looseObject({ memberId: text, coverageId: text.optional(), terminationDate: day, reason: z.string().optional() });

const PatchMember = z.looseObject({
  firstName: text.optional(),
  lastName: text.optional(),
  dateOfBirth: day.optional(),
  gender: z.string().optional(),
  email: z.string().optional(),
  phone: z.string().optional(),
  address: Address.optional(),
});

/** Each write's body, by the endpoint it belongs to. */
export const WriteBodies = { CreateGroup, InitialEnrollment, AddSubscriber, AddDependent, Terminate, PatchMember } as const;

/** Check a body, or throw the spec's 400: "Validation failed" with the `errors` array. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const r = schema.safeParse(body);
  if (!r.success) throw new HttpError(400, "Validation failed", zodIssues(r.error.issues));
  return r.data;
}
