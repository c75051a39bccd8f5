/**
 * `census apply` as a library: settle what an earlier apply left open, plan against the service as
 * it is now, send each write once (recorded in the journal before it leaves and when it answers),
 * and learn the UUIDs back. Returns a report, never throws for a refused or failed write: a
 * failure is an answer, and the result file records it.
 */
import { randomUUID } from "node:crypto";
import { paths } from "../api/endpoints.js";
import { answerLost } from "../api/lost-answer.js";
import type { ServiceClient } from "../api/client.js";
import type { AnswerSeen } from "../api/write-answers.js";
import { ApiError, AuthError, PermissionError, redact, SnapshotBusyError } from "../errors.js";
import type { ApplyJournal, OpenWrite, WriteKind } from "./apply-journal.js";
import { MemberIndex } from "./census-match.js";
import { planCensus, planSends, type CensusPlan } from "./census-plan.js";
import { planJson } from "./plan-render.js";
import type { Census, CensusRow } from "./read-census.js";
import { readServiceGroup } from "./service-group.js";
import { PORTAL_ADVICE, settleAccepted, settleByListing, settleEarlierAccepted, settleEnrollment, type SettleDeps, type Settled } from "./settle-write.js";
import { dependentBody, shownBody, subscriberEntry } from "./write-bodies.js";

export type CensusClient = SettleDeps["client"] & Pick<ServiceClient, "addSubscriber" | "addDependent" | "terminate" | "patchMember">;

export interface ApplyOptions {
  readonly batchSize: number;
  readonly settleMs: number;
  readonly pollTimeoutMs: number;
  readonly sleep: (ms: number) => Promise<void>;
  /** One progress line (lines and ids only). */
  readonly log: (line: string) => void;
}

/** A write's answer as recorded: its status, and its shape when the service accepted it. */
export type AnswerRecord = AnswerSeen | { readonly status: number };

/** One write as the result file records it. */
export interface RequestRecord {
  readonly id: string;
  readonly kind: WriteKind;
  readonly endpoint: string;
  readonly lines: readonly number[];
  readonly memberId?: string;
  enrollmentRequestId?: string;
  /** The body as sent, every SSN as its last four digits and token and every other cell of a person by its shape (write-bodies.ts). */
  readonly body?: unknown;
  /**
   * What came back, as the client read it: the status and shape (types only) of an accepted write,
   * e.g. `{status: 204, shape: "empty"}`; the status alone of a refusal (what it said is `message`);
   * absent when no answer came (lost, or the write was an earlier apply's).
   */
  answer?: AnswerRecord;
  outcome: string;
  message?: string;
}

export interface ApplyReport {
  readonly status: "succeeded" | "failed";
  /** Writes an earlier apply left open, and how they were settled. */
  readonly settledFromEarlier: readonly RequestRecord[];
  readonly plan: Record<string, unknown>;
  readonly requests: readonly RequestRecord[];
  readonly learned: readonly { line: number; memberId: string; coverageId: string }[];
  readonly stoppedBy?: string;
}

/** Outcomes that fail the apply (`accepted-unlisted`: accepted, but not seen yet; the next apply looks again). */
const FAILED = new Set(["failed", "forbidden", "unauthorized", "unsettled", "not-applied", "accepted-unlisted"]);

/**
 * Apply `census` to the group.
 *
 * @example const report = await applyCensus(client, group, census, key, journal, { batchSize: 50, settleMs: 30_000, pollTimeoutMs: 120_000, sleep, log });
 */
export async function applyCensus(
  client: CensusClient,
  group: SettleDeps["group"],
  census: Census,
  key: Buffer,
  journal: ApplyJournal,
  opts: ApplyOptions,
): Promise<ApplyReport> {
  const deps: SettleDeps = { client, group, key, settleMs: opts.settleMs, pollTimeoutMs: opts.pollTimeoutMs, sleep: opts.sleep };
  const rowAt = (line: number): CensusRow => census.rows.byLine(line)!;
  const requests: RequestRecord[] = [];
  let stoppedBy: string | undefined;

  const settledFromEarlier: RequestRecord[] = [];
  for (const w of journal.openWrites()) {
    const rec: RequestRecord = { id: w.intent.id, kind: w.intent.kind, endpoint: "(an earlier apply)", lines: w.intent.lines, outcome: "unsettled", ...(w.enrollmentRequestId ? { enrollmentRequestId: w.enrollmentRequestId } : {}) };
    const s = await settleEarlier(deps, w);
    record(journal, rec, s);
    opts.log(`settled a write of an earlier apply (${rec.kind}, lines ${rec.lines.join(", ")}): ${rec.outcome}${rec.message ? `: ${rec.message}` : ""}`);
    settledFromEarlier.push(rec);
    if (!s.settled) stoppedBy = s.message;
  }
  if (stoppedBy) return { status: "failed", settledFromEarlier, plan: {}, requests, learned: [], stoppedBy };

  /** Send one write; `enrollment` ones answer a request id to poll. Returns the lines to re-plan when the answer was lost and it did not land. */
  const send = async (
    kind: WriteKind,
    endpoint: string,
    lines: number[],
    body: unknown,
    memberId: string | undefined,
    call: () => Promise<{ readonly answer: AnswerSeen; readonly enrollmentRequestId?: string | undefined }>,
  ): Promise<number[]> => {
    if (stoppedBy) return [];
    const tokens = lines.map((l) => rowAt(l).ssnToken);
    const rec: RequestRecord = { id: randomUUID(), kind, endpoint, lines, ...(memberId ? { memberId } : {}), body: shownBody(body, key), outcome: "unsettled" };
    try {
      journal.append({ t: "intent", id: rec.id, kind, lines, tokens, at: new Date().toISOString() });
    } catch (e) {
      // The snapshot was re-keyed since the apply read its key (store/pii/key-guard.ts): this write is not sent.
      if (!(e instanceof SnapshotBusyError)) throw e;
      stoppedBy = e.message;
      return [];
    }
    requests.push(rec);
    let answer: Awaited<ReturnType<typeof call>>;
    try {
      answer = await call();
    } catch (e) {
      // A status is an answer (refused is refused, whatever the body) unless it says the answer was lost (a gateway's 502 or 504).
      const refused = e instanceof ApiError && !answerLost(e);
      if (refused) rec.answer = { status: e.status };
      if (e instanceof PermissionError || e instanceof AuthError) {
        record(journal, rec, { settled: true, outcome: e instanceof PermissionError ? "forbidden" : "unauthorized", message: e.message });
        stoppedBy = e.message;
      } else if (refused) {
        record(journal, rec, { settled: true, outcome: "failed", message: `${e.message}; ${PORTAL_ADVICE}` });
      } else {
        // The answer was lost (a timeout, a reset) or unreadable: the write may have landed. Look.
        opts.log(`${kind} (lines ${lines.join(", ")}): the answer was lost (${redact(e instanceof Error ? e.message : String(e))}); looking before deciding`);
        const s: Settled =
          kind === "add-subscriber" || kind === "add-dependent"
            ? await settleByListing(deps, tokens)
            : { settled: true, outcome: "not-applied", message: "the answer was lost; the member listing decides whether it is sent again" };
        record(journal, rec, s);
        opts.log(`${kind} (lines ${lines.join(", ")}): ${rec.outcome}`);
        return s.outcome === "not-applied" ? lines : [];
      }
      opts.log(`${kind} (lines ${lines.join(", ")}): ${rec.outcome}: ${rec.message}`);
      return [];
    }
    rec.answer = answer.answer;
    const requestId = answer.enrollmentRequestId;
    if (requestId !== undefined) {
      rec.enrollmentRequestId = requestId;
      journal.append({ t: "accepted", id: rec.id, enrollmentRequestId: requestId, at: new Date().toISOString() });
      const s = await settleEnrollment(deps, requestId);
      record(journal, rec, s);
      if (!s.settled) stoppedBy = s.message;
    } else if (kind === "add-subscriber" || kind === "add-dependent") {
      // Accepted without a request id to poll (a shape the spec leaves open): nothing was lost, and
      // the listing says whether it landed.
      record(journal, rec, await settleAccepted(deps, tokens, answer.answer));
    } else record(journal, rec, { settled: true, outcome: "succeeded" });
    opts.log(`${kind} (lines ${lines.join(", ")})${rec.enrollmentRequestId ? `, enrollment request ${rec.enrollmentRequestId}` : ""}: ${rec.outcome}${rec.message ? `: ${rec.message}` : ""}`);
    return [];
  };

  const execute = async (plan: CensusPlan): Promise<number[]> => {
    const gp = group.groupPolicyId;
    const lost: number[] = [];
    for (let i = 0; i < plan.addSubscribers.length; i += opts.batchSize) {
      const batch = plan.addSubscribers.slice(i, i + opts.batchSize);
      const body = { subscribers: batch.map((s) => subscriberEntry(s, rowAt)) };
      lost.push(...(await send("add-subscriber", paths.addSubscriber(gp), batch.flatMap((s) => [s.line, ...s.dependents]), body, undefined, () => client.addSubscriber(gp, body))));
    }
    for (const d of plan.addDependents) {
      const body = dependentBody(d, rowAt);
      lost.push(...(await send("add-dependent", paths.addDependent(gp, d.subscriberCoverageId), [d.line], body, d.subscriberMemberId, () => client.addDependent(gp, d.subscriberCoverageId, body))));
    }
    for (const t of plan.terminations) {
      const body = { memberId: t.memberId, coverageId: t.coverageId, terminationDate: t.terminationDate };
      lost.push(...(await send("terminate", paths.terminate(gp), [t.line], body, t.memberId, () => client.terminate(gp, body))));
    }
    for (const u of plan.updates) lost.push(...(await send("patch-member", paths.patchMember(u.memberId), [u.line], u.body, u.memberId, () => client.patchMember(u.memberId, u.body))));
    return lost;
  };

  let shownPlan: Record<string, unknown> = {};
  try {
    let view = await readServiceGroup(client, group, key);
    const plan = planCensus(census, view);
    shownPlan = planJson(plan);
    opts.log(`plan: ${plan.addSubscribers.length} subscriber(s) and ${plan.addDependents.length} dependent(s) to add, ${plan.terminations.length} termination(s), ${plan.updates.length} update(s); ${plan.unmatched.length} row(s) cannot be matched, ${plan.refused.length} refused`);
    if (planSends(plan)) {
      let lost = await execute(plan);
      // A write whose answer was lost and whose effect the listing does not show: planned again, once,
      // from a fresh look, for those rows only (a write the service refused is never repeated).
      if (lost.length > 0 && !stoppedBy) {
        view = await readServiceGroup(client, group, key);
        const again = onlyLines(planCensus(census, view), new Set(lost));
        const planned = new Set([...again.addSubscribers.flatMap((s) => [s.line, ...s.dependents]), ...[...again.addDependents, ...again.terminations, ...again.updates].map((x) => x.line)]);
        for (const r of requests)
          if (r.outcome === "not-applied" && r.lines.every((l) => !planned.has(l))) Object.assign(r, { outcome: "found-applied", message: "the answer was lost; the service shows its change" });
        lost = await execute(again);
      }
      view = await readServiceGroup(client, group, key);
    }
    const index = new MemberIndex(view.members);
    const learned: { line: number; memberId: string; coverageId: string }[] = [];
    for (const r of census.rows) {
      const m = index.match(r);
      if (m.kind === "member") learned.push({ line: r.line, memberId: m.member.memberId, coverageId: m.member.coverage.id });
    }
    // An earlier write found not applied is no failure of this apply: the plan above decided it afresh.
    const failed = requests.some((r) => FAILED.has(r.outcome) && !superseded(r, requests)) || settledFromEarlier.some((r) => r.outcome === "failed");
    return { status: failed || stoppedBy ? "failed" : "succeeded", settledFromEarlier, plan: shownPlan, requests, learned, ...(stoppedBy ? { stoppedBy } : {}) };
  } catch (e) {
    // A read that failed after writes were sent: the report still says what was sent, and the journal holds it.
    const why = `${redact(e instanceof Error ? e.message : String(e))}; what was sent is recorded, and the next apply compares with the service again`;
    opts.log(`stopped: ${why}`);
    return { status: "failed", settledFromEarlier, plan: shownPlan, requests, learned: [], stoppedBy: why };
  }
}

/** A lost write that was sent again and landed does not fail the apply. */
function superseded(r: RequestRecord, all: readonly RequestRecord[]): boolean {
  if (r.outcome !== "not-applied") return false;
  return all.some((o) => o !== r && o.kind === r.kind && o.outcome === "succeeded" && r.lines.every((l) => o.lines.includes(l)));
}

function onlyLines(plan: CensusPlan, lines: ReadonlySet<number>): CensusPlan {
  return {
    ...plan,
    addSubscribers: plan.addSubscribers.filter((s) => lines.has(s.line)),
    addDependents: plan.addDependents.filter((d) => lines.has(d.line)),
    terminations: plan.terminations.filter((t) => lines.has(t.line)),
    updates: plan.updates.filter((u) => lines.has(u.line)),
  };
}

async function settleEarlier(deps: SettleDeps, w: OpenWrite): Promise<Settled> {
  if (w.enrollmentRequestId) return settleEnrollment(deps, w.enrollmentRequestId);
  if (w.outcome === "accepted-unlisted") return settleEarlierAccepted(deps, w.intent.tokens);
  if (w.intent.kind === "add-subscriber" || w.intent.kind === "add-dependent") return settleByListing(deps, w.intent.tokens);
  // A terminate or a patch sets values: the fresh plan sees whether they are there, and sends it again only if not.
  return { settled: true, outcome: "found-applied", message: "a terminate or patch whose answer was lost: the plan below compares with the service and sends it again only if its change is missing" };
}

function record(journal: ApplyJournal, rec: RequestRecord, s: Settled): void {
  rec.outcome = s.outcome;
  if (s.message) rec.message = s.message;
  journal.append({ t: "outcome", id: rec.id, outcome: s.outcome, settled: s.settled, ...(s.message ? { message: s.message } : {}), at: new Date().toISOString() });
}
