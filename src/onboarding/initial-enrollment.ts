/**
 * Enrolling a new group's people as the spec's rule 2 says: POST initial-enrollment with the
 * caller's memberIds. The member listing is looked at first, so a member it already shows for the
 * group is not sent again (a second run sends nothing), and an answer that was lost is never
 * followed by a blind re-send: the listing says who is there. Outcomes name members by their place
 * in the file, never by a person's data.
 */
import type { EnrolleeInput } from "../../schemas/writes.js";
import type { ServiceClient } from "../api/client.js";
import { answerLost } from "../api/lost-answer.js";
import type { EnrollTarget, HouseholdOutcome } from "../eligibility/enroll-subscribers.js";
import { AuthError, BenefitsSyncError, PermissionError } from "../errors.js";

export type MemberInput = EnrolleeInput & { readonly memberId: string };

export interface InitialEnrollOptions {
  /** Members per request; default 100. A dependent is never split from the employee before it. */
  readonly batchSize?: number | undefined;
}

/** The memberIds the member listing shows for the group (the spec's member identifier). */
async function listedIds(client: ServiceClient, target: EnrollTarget): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const m of client.listMembers({ groupId: target.groupId })) {
    ids.add(m.id);
    const own = (m as { memberId?: unknown }).memberId;
    if (typeof own === "string") ids.add(own);
  }
  return ids;
}

const isEmployee = (m: MemberInput): boolean => m.memberType === "employee" || m.memberType === "subscriber";

/** Batches of places in `members`, each cut only before an employee, so dependents stay with theirs. */
function batches(members: readonly MemberInput[], todo: readonly number[], size: number): number[][] {
  const out: number[][] = [];
  let current: number[] = [];
  for (const i of todo) {
    if (current.length >= size && isEmployee(members[i] as MemberInput)) {
      out.push(current);
      current = [];
    }
    current.push(i);
  }
  if (current.length) out.push(current);
  return out;
}

/**
 * Enroll the members the listing does not show yet, and say what became of each. A 401 or 403 stops
 * the rest (`not sent`); any other refusal fails its batch and the next goes on.
 *
 * @example
 * const outcomes = await enrollInitialMembers(client, { groupPolicyId, groupId, planId }, members);
 */
export async function enrollInitialMembers(client: ServiceClient, target: EnrollTarget, members: readonly MemberInput[], opts: InitialEnrollOptions = {}): Promise<HouseholdOutcome[]> {
  if (members.length === 0) return [];
  const present = await listedIds(client, target);
  const outcomes: HouseholdOutcome[] = [];
  const todo: number[] = [];
  members.forEach((m, index) => (present.has(m.memberId) ? outcomes.push({ index, status: "already" }) : todo.push(index)));
  const all = batches(members, todo, Math.max(1, opts.batchSize ?? 100));
  for (const [n, batch] of all.entries()) {
    const stop = await enrollBatch(client, target, members, batch, outcomes);
    if (stop) {
      for (const index of all.slice(n + 1).flat()) outcomes.push({ index, status: "not sent", reason: stop });
      break;
    }
  }
  return outcomes.sort((a, b) => a.index - b.index);
}

/** One initial-enrollment request; returns why the rest must not be sent, if so. */
async function enrollBatch(client: ServiceClient, target: EnrollTarget, members: readonly MemberInput[], batch: readonly number[], outcomes: HouseholdOutcome[]): Promise<string | undefined> {
  try {
    await client.initialEnrollment(target.groupPolicyId, { members: batch.map((i) => members[i] as MemberInput) });
  } catch (err) {
    if (answerLost(err)) {
      const now = await listedIds(client, target);
      const reason = "the answer to initial-enrollment was lost and the member listing does not show the member yet; it was not sent again: run the same command again to look again";
      for (const index of batch) outcomes.push(now.has((members[index] as MemberInput).memberId) ? { index, status: "enrolled" } : { index, status: "unknown", reason });
      return undefined;
    }
    const message = err instanceof BenefitsSyncError ? `${err.message} [${err.code}]` : String(err);
    for (const index of batch) outcomes.push({ index, status: "failed", reason: message });
    return err instanceof PermissionError || err instanceof AuthError ? message : undefined;
  }
  // The answer is synchronous (an enrollment result); its shape is not relied on beyond success.
  for (const index of batch) outcomes.push({ index, status: "enrolled" });
  return undefined;
}
