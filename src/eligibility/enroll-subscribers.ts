/**
 * Enrolling households into a group's plan as the spec's rule 3 says: add-subscriber (v3) in
 * batches, each enrollment request polled until it succeeds or fails. A household whose subscriber
 * the member listing already shows is not sent again (a second run after a lost answer or a crash
 * sends only what is missing), and a batch whose answer was lost is looked for in the listing,
 * never sent again blindly. Outcomes name households by their place in the input, never by a
 * person's data, so they can be printed and kept.
 */
import type { EnrolleeInput, SubscriberEntry } from "../../schemas/writes.js";
import type { ServiceClient } from "../api/client.js";
import { answerLost } from "../api/lost-answer.js";
import { AuthError, BenefitsSyncError, PermissionError, TimeoutError } from "../errors.js";

export interface HouseholdInput {
  readonly self: EnrolleeInput;
  readonly spouse?: EnrolleeInput | undefined;
  readonly children?: readonly EnrolleeInput[] | undefined;
  readonly tags?: readonly string[] | undefined;
}

export interface EnrollTarget {
  readonly groupPolicyId: string;
  /** The group number: the member listing's `groupId` filter. */
  readonly groupId: string;
  readonly planId: string;
}

export type EnrollmentStatus = "enrolled" | "already" | "failed" | "unknown" | "not sent";

export interface HouseholdOutcome {
  /** The household's place in the input, from 0. */
  readonly index: number;
  readonly status: EnrollmentStatus;
  readonly enrollmentRequestId?: string | undefined;
  /** Why it failed or is unknown: field paths and codes, never the people's data. */
  readonly reason?: string | undefined;
}

export interface EnrollOptions {
  /** Households per add-subscriber request; default 25. */
  readonly batchSize?: number | undefined;
  /** Longest wait for one enrollment request; default 120 000 ms. */
  readonly timeoutMs?: number | undefined;
}

/** How a subscriber is recognised in the member listing: the demographics the spec suggests matching. */
const personKey = (p: { firstName?: unknown; lastName?: unknown; dateOfBirth?: unknown }): string =>
  [p.firstName, p.lastName, p.dateOfBirth].map((v) => String(v ?? "").trim().toLowerCase()).join("|");

async function listedSubscribers(client: ServiceClient, target: EnrollTarget): Promise<Set<string>> {
  const keys = new Set<string>();
  for await (const m of client.listMembers({ groupId: target.groupId, planId: target.planId })) {
    if (m.relationship === "self" || m.memberType === "employee" || m.memberType === "subscriber") keys.add(personKey(m));
  }
  return keys;
}

/** An enrollment request's errors as field paths and codes: its messages may quote the enrollee. */
function failureReason(errors: readonly unknown[] | null | undefined): string {
  const parts = (errors ?? []).slice(0, 5).map((e) => {
    const o = (e ?? {}) as { path?: unknown; code?: unknown };
    const path = Array.isArray(o.path) && o.path.length ? o.path.join(".") : "(request)";
    return typeof o.code === "string" ? `${path} (${o.code})` : path;
  });
  return `the enrollment request failed${parts.length ? `: ${parts.join("; ")}` : ""}; the details are in the portal`;
}

/**
 * Enroll each household, batch by batch, and say what became of each. A 401 or 403 stops the rest
 * (they are `not sent`); any other refusal fails its batch and the next batch goes on.
 *
 * @example
 * const outcomes = await enrollHouseholds(client, { groupPolicyId, groupId, planId }, households);
 */
export async function enrollHouseholds(client: ServiceClient, target: EnrollTarget, households: readonly HouseholdInput[], opts: EnrollOptions = {}): Promise<HouseholdOutcome[]> {
  const size = Math.max(1, opts.batchSize ?? 25);
  const present = households.length ? await listedSubscribers(client, target) : new Set<string>();
  const outcomes: HouseholdOutcome[] = [];
  const todo: number[] = [];
  households.forEach((h, index) => (present.has(personKey(h.self)) ? outcomes.push({ index, status: "already" }) : todo.push(index)));
  for (let at = 0; at < todo.length; at += size) {
    const batch = todo.slice(at, at + size);
    const stop = await enrollBatch(client, target, households, batch, opts, outcomes);
    if (stop) {
      for (const index of todo.slice(at + size)) outcomes.push({ index, status: "not sent", reason: stop });
      break;
    }
  }
  return outcomes.sort((a, b) => a.index - b.index);
}

/** One add-subscriber request and its poll; returns why the rest must not be sent, if so. */
async function enrollBatch(
  client: ServiceClient,
  target: EnrollTarget,
  households: readonly HouseholdInput[],
  batch: readonly number[],
  opts: EnrollOptions,
  outcomes: HouseholdOutcome[],
): Promise<string | undefined> {
  const subscribers = batch.map((i) => ({ plan: target.planId, ...households[i] }) as SubscriberEntry);
  const settle = (status: EnrollmentStatus, extra: Omit<HouseholdOutcome, "index" | "status"> = {}) => batch.forEach((index) => outcomes.push({ index, status, ...extra }));
  /** Whatever the answer could not say, the listing does: who is there now. */
  const lookInListing = async (reason: string, enrollmentRequestId?: string) => {
    const now = await listedSubscribers(client, target);
    for (const index of batch) {
      const there = now.has(personKey((households[index] as HouseholdInput).self));
      outcomes.push(there ? { index, status: "enrolled", enrollmentRequestId } : { index, status: "unknown", enrollmentRequestId, reason });
    }
  };
  let accepted;
  try {
    accepted = await client.addSubscriber(target.groupPolicyId, { subscribers });
  } catch (err) {
    if (answerLost(err)) {
      await lookInListing("the answer to add-subscriber was lost and the listing does not show the subscriber yet; it was not sent again: run the same command again to look again");
      return undefined;
    }
    const message = err instanceof BenefitsSyncError ? `${err.message} [${err.code}]` : String(err);
    settle("failed", { reason: message });
    return err instanceof PermissionError || err instanceof AuthError ? message : undefined;
  }
  const id = accepted.enrollmentRequestId;
  if (!id) {
    await lookInListing(`add-subscriber was accepted (${accepted.answer.status}) without naming an enrollment request, and the listing does not show the subscriber yet`);
    return undefined;
  }
  try {
    const done = accepted.request && (accepted.request.status === "succeeded" || accepted.request.status === "failed") ? accepted.request : await client.waitForEnrollmentRequest(id, { timeoutMs: opts.timeoutMs });
    if (done.status === "succeeded") settle("enrolled", { enrollmentRequestId: id });
    else settle("failed", { enrollmentRequestId: id, reason: failureReason(done.errors) });
  } catch (err) {
    if (!(err instanceof TimeoutError) && !answerLost(err)) throw err;
    await lookInListing(`enrollment request ${id} had not settled (${err instanceof Error ? err.message : String(err)}); look at it again later`, id);
  }
  return undefined;
}
