/**
 * The answers of the write endpoints and of an enrollment poll, read whatever plausible shape they
 * take. The spec shows no body for terminate, add-dependent and update-member, and only names what
 * create group, add-subscriber and a poll answer; a write the service accepted must never look
 * failed because its body was not the one we guessed, since the caller might then send it again.
 * Each reader keeps what it can identify (`undefined` where the answer did not say) and the answer
 * itself is recorded as its status and shape: types only, because these bodies carry people.
 */
import { EnrollmentRequest } from "../../schemas/enrollment-request.js";
import { Group } from "../../schemas/group.js";
import { Coverage, Member } from "../../schemas/member.js";
import { enrollmentStatus } from "./enrollment-status.js";
import { describeShape, validate } from "./shape.js";

/** What a write's answer looked like: its HTTP status and its shape (types only, never values). */
export interface AnswerSeen {
  readonly status: number;
  /** `empty` for no body, else e.g. `{id: string, status: string}`. */
  readonly shape: string;
}

/** A poll's answer: the documented status, and the one the service sent. */
export type EnrollmentRequestSeen = EnrollmentRequest & { readonly rawStatus: string };

export interface GroupCreated {
  /** The new group's groupPolicyId; undefined when the answer did not name it (list groups to find it). */
  readonly groupPolicyId: string | undefined;
  /** The group, when the answer carried it. */
  readonly group: Group | undefined;
  readonly answer: AnswerSeen;
}

export interface EnrollmentAccepted {
  /** The request to poll; undefined when the answer named none (the write was accepted: list members to see it). */
  readonly enrollmentRequestId: string | undefined;
  /** The request itself, when the answer was the whole request. */
  readonly request: EnrollmentRequestSeen | undefined;
  readonly answer: AnswerSeen;
}

export interface CoverageTerminated {
  /** The terminated coverage, when the answer carried it (alone, wrapped, or in the member). */
  readonly coverage: Coverage | undefined;
  /** The member, when the answer was the member. */
  readonly member: Member | undefined;
  /** Set when the service queued the termination as an enrollment request to poll. */
  readonly enrollmentRequestId: string | undefined;
  readonly answer: AnswerSeen;
}

export interface MemberPatched {
  readonly member: Member | undefined;
  readonly answer: AnswerSeen;
}

export interface MembersEnrolled {
  readonly enrolled: number | undefined;
  readonly members: readonly Member[] | undefined;
  readonly enrollmentRequestId: string | undefined;
  readonly answer: AnswerSeen;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** The status and shape of an answer (`value` undefined: no body). */
export function answerSeen(status: number, value: unknown): AnswerSeen {
  return { status, shape: value === undefined ? "empty" : describeShape(value) };
}

/** The one object an answer is about: itself, under `data`/`result` or a named key, or alone in a list. */
function subject(value: unknown, names: readonly string[]): Obj | undefined {
  const one = Array.isArray(value) && value.length === 1 ? value[0] : value;
  if (!isObj(one)) return undefined;
  for (const key of [...names, "data", "result"]) if (isObj(one[key])) return one[key] as Obj;
  return one;
}

const parsed = <T>(schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } }, v: unknown): T | undefined => {
  const r = schema.safeParse(v);
  return r.success ? r.data : undefined;
};

/** `POST /v2/groups`: the group, `{groupPolicyId}`, `{id}`, wrapped, or nothing. */
export function readGroupCreated(status: number, value: unknown): GroupCreated {
  const s = subject(value, ["group", "groupPolicy"]);
  const groupPolicyId = str(s?.id) ?? str(s?.groupPolicyId);
  const group = s && groupPolicyId ? parsed(Group, { ...s, id: groupPolicyId }) : undefined;
  return { groupPolicyId, group, answer: answerSeen(status, value) };
}

/** Add-subscriber and add-dependent: `{enrollmentRequestId}`, `{id}`, the whole request, wrapped, or nothing. */
export function readEnrollmentAccepted(status: number, value: unknown): EnrollmentAccepted {
  const s = subject(value, ["enrollmentRequest", "request"]);
  const enrollmentRequestId = str(s?.enrollmentRequestId) ?? str(s?.id) ?? str(s?.requestId);
  const request = s && enrollmentRequestId && (s.status !== undefined || s.state !== undefined) ? toEnrollmentRequest(s, enrollmentRequestId) : undefined;
  return { enrollmentRequestId, request, answer: answerSeen(status, value) };
}

/** Terminate: nothing (204), the coverage, `{coverage}`, the member with its coverages, or a request to poll. */
export function readTerminated(status: number, value: unknown, coverageId: string | undefined): CoverageTerminated {
  const answer = answerSeen(status, value);
  const s = subject(value, ["coverage", "member"]);
  if (!s) return { coverage: undefined, member: undefined, enrollmentRequestId: undefined, answer };
  const enrollmentRequestId = str(s.enrollmentRequestId);
  if (enrollmentRequestId) return { coverage: undefined, member: undefined, enrollmentRequestId, answer };
  if (Array.isArray(s.coverages)) {
    const member = parsed(Member, s);
    const coverages = member?.coverages ?? [];
    const coverage = coverageId ? coverages.find((c) => c.id === coverageId) : coverages.find((c) => c.status === "terminated");
    return { coverage, member, enrollmentRequestId: undefined, answer };
  }
  return { coverage: parsed(Coverage, s), member: undefined, enrollmentRequestId: undefined, answer };
}

/** Update-member: the member, wrapped, or nothing (204, `{message}`). */
export function readPatched(status: number, value: unknown): MemberPatched {
  const s = subject(value, ["member"]);
  return { member: s && str(s.id) ? parsed(Member, s) : undefined, answer: answerSeen(status, value) };
}

/** Initial enrollment: `{enrolled, members}`, `{members}`, a bare list of members, a request to poll, or nothing. */
export function readEnrolled(status: number, value: unknown): MembersEnrolled {
  const answer = answerSeen(status, value);
  const list = Array.isArray(value) ? value : isObj(value) ? (value.members ?? (isObj(value.data) ? value.data.members : value.data)) : undefined;
  const members = Array.isArray(list) ? list.flatMap((m) => parsed(Member, m) ?? []) : undefined;
  const count = isObj(value) && typeof value.enrolled === "number" ? value.enrolled : members?.length;
  const enrollmentRequestId = isObj(value) ? str(value.enrollmentRequestId) : undefined;
  return { enrolled: count, members, enrollmentRequestId, answer };
}

/**
 * `GET /v1/enrollmentRequests/{id}`: the request alone or wrapped, its status under `status` or
 * `state` in any spelling (see {@link enrollmentStatus}), its id the one asked for when absent.
 */
export function readEnrollmentRequest(value: unknown, id: string, endpoint: string): EnrollmentRequestSeen {
  const s = subject(value, ["enrollmentRequest", "request"]);
  if (!s) return validate(EnrollmentRequest, value, endpoint, "EnrollmentRequest") as EnrollmentRequestSeen;
  return toEnrollmentRequest(s, id, endpoint);
}

function toEnrollmentRequest(s: Obj, id: string, endpoint = "enrollment request"): EnrollmentRequestSeen {
  const raw = s.status ?? s.state;
  const errors = s.errors === undefined || s.errors === null || Array.isArray(s.errors) ? s.errors : [s.errors];
  const req = validate(EnrollmentRequest, { ...s, id: str(s.id) ?? id, status: enrollmentStatus(raw), errors }, endpoint, "EnrollmentRequest");
  return { ...req, rawStatus: typeof raw === "string" ? raw : String(raw ?? "") };
}
