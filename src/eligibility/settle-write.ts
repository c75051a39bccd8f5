/**
 * Looking before sending again. A write whose answer never came may have reached the service: an
 * enrollment request whose id we hold is polled until it settles; otherwise the member listing is
 * read until the write's people show up or the settle window passes (the service applies an
 * enrollment after it answers). Only then may the write be planned again.
 */
import { redact, TimeoutError } from "../errors.js";
import type { EnrollmentRequest } from "../../schemas/enrollment-request.js";
import { errorBodyView } from "../api/body-view.js";
import type { ServiceClient } from "../api/client.js";
import type { AnswerSeen } from "../api/write-answers.js";
import { paths } from "../api/endpoints.js";
import { readServiceGroup, type GroupReader } from "./service-group.js";

/** The spec: "When a request fails, the details are visible in the portal." */
export const PORTAL_ADVICE = "the details of a failed request are in the service's portal";

export interface SettleDeps {
  readonly client: GroupReader & Pick<ServiceClient, "waitForEnrollmentRequest">;
  readonly group: { groupPolicyId: string; groupNumber: string | null; plans: string[] };
  readonly key: Buffer;
  readonly settleMs: number;
  readonly pollTimeoutMs: number;
  readonly sleep: (ms: number) => Promise<void>;
}

export type Settled =
  | { readonly settled: true; readonly outcome: "succeeded" | "failed" | "forbidden" | "unauthorized" | "found-applied" | "not-applied" | "accepted-listed"; readonly message?: string }
  | { readonly settled: false; readonly outcome: "unsettled" | "accepted-unlisted"; readonly message: string };

/**
 * Why an enrollment request failed, as the client's one rule for answers that carry people allows:
 * its `errors` may echo the enrollee, so they are described (how many, which field paths), never
 * quoted; the portal has the details.
 */
export function failureText(req: EnrollmentRequest): string {
  const errors = (req.errors ?? []).map((e) => {
    const path = e !== null && typeof e === "object" && Array.isArray((e as { path?: unknown }).path) ? ((e as { path: unknown[] }).path.map(String)) : [];
    return { path, message: "" };
  });
  const view = errorBodyView({ errors }, paths.enrollmentRequest(req.id));
  const fields = (view.issues ?? []).map((i) => i.path.join(".")).filter((p) => p !== "");
  return redact(`enrollment request ${req.id} failed: ${view.serverMessage}${fields.length ? `; fields: ${fields.join(", ")}` : ""}; ${PORTAL_ADVICE}`);
}

/**
 * Poll enrollment request `id` until it succeeds or fails. Not settling within the poll timeout
 * leaves it open: the next apply polls it again before anything else.
 */
export async function settleEnrollment(deps: SettleDeps, id: string): Promise<Settled> {
  try {
    const req = await deps.client.waitForEnrollmentRequest(id, { timeoutMs: deps.pollTimeoutMs });
    return req.status === "succeeded" ? { settled: true, outcome: "succeeded" } : { settled: true, outcome: "failed", message: failureText(req) };
  } catch (e) {
    const why = e instanceof TimeoutError ? `enrollment request ${id} has not settled yet` : `enrollment request ${id} could not be read (${redact(e instanceof Error ? e.message : String(e))})`;
    return { settled: false, outcome: "unsettled", message: `${why}: apply again later; it is polled before anything is sent` };
  }
}

/**
 * Whether every person (by SSN token) of an enrollment write whose id we never got is in the
 * group's listing, looking again until `settleMs` has passed.
 */
export async function settleByListing(deps: SettleDeps, tokens: readonly string[]): Promise<Settled> {
  return (await inListing(deps, tokens))
    ? { settled: true, outcome: "found-applied", message: "the answer was lost; its people are in the member listing" }
    : { settled: true, outcome: "not-applied", message: `the answer was lost; its people were not in the member listing within ${Math.round(deps.settleMs / 1000)} s, so it may be sent again` };
}

/**
 * An add the service accepted without naming an enrollment request to poll (`answer`: a shape the
 * spec leaves open, such as an empty 202). Nothing was lost: the listing says whether it landed yet.
 * When it does not show within the settle window the write stays open in the journal, so the next
 * apply looks at the listing again before anything is planned for its rows.
 *
 * @example await settleAccepted(deps, tokens, { status: 202, shape: "empty" }) // { outcome: "accepted-listed", ... }
 */
export async function settleAccepted(deps: SettleDeps, tokens: readonly string[], answer: AnswerSeen): Promise<Settled> {
  const seen = `accepted (${answer.status}, ${answer.shape}) with no enrollment request id to poll`;
  return (await inListing(deps, tokens))
    ? { settled: true, outcome: "accepted-listed", message: `${seen}; its people are in the member listing` }
    : { settled: false, outcome: "accepted-unlisted", message: `${seen}; its people were not in the member listing within ${Math.round(deps.settleMs / 1000)} s: the next apply looks at the listing again before sending anything for its rows` };
}

/**
 * An add an earlier apply saw accepted with no request id, whose people the listing did not show
 * then: looked for once more; still absent after a second settle window, it is planned again.
 */
export async function settleEarlierAccepted(deps: SettleDeps, tokens: readonly string[]): Promise<Settled> {
  const seen = "accepted by an earlier apply with no enrollment request id to poll";
  return (await inListing(deps, tokens))
    ? { settled: true, outcome: "accepted-listed", message: `${seen}; its people are in the member listing now` }
    : { settled: true, outcome: "not-applied", message: `${seen}; its people are still not in the member listing after ${Math.round(deps.settleMs / 1000)} s, so it may be sent again` };
}

/** Whether the people with these SSN tokens are all in the group's listing, looking again until `settleMs` has passed. */
async function inListing(deps: SettleDeps, tokens: readonly string[]): Promise<boolean> {
  const deadline = Date.now() + deps.settleMs;
  for (;;) {
    const view = await readServiceGroup(deps.client, deps.group, deps.key);
    const present = new Set(view.members.map((m) => m.ssnToken));
    if (tokens.every((t) => present.has(t))) return true;
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await deps.sleep(Math.min(1_000, left));
  }
}
