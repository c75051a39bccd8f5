/**
 * An enrollment request's status as the service may spell it. The spec names no states ("can
 * succeed or fail; a caller polls it"), so `COMPLETED`, `Success` or `in-progress` are as likely as
 * our reading (`pending`, `processing`, `succeeded`, `failed`). Reading a success as unknown would
 * make an enrollment that happened look failed, and a caller might send it again.
 */
import type { EnrollmentRequestStatus } from "../../schemas/enrollment-request.js";

const SPELLINGS: Readonly<Record<EnrollmentRequestStatus, readonly string[]>> = {
  succeeded: ["succeeded", "success", "successful", "completed", "complete", "done", "processed", "finished", "enrolled", "approved", "ok"],
  // A partial outcome is a failure: the details of what did not happen are in the portal.
  failed: ["failed", "failure", "fail", "error", "errored", "rejected", "declined", "invalid", "cancelled", "canceled", "aborted", "partial", "partially_failed", "partially_succeeded", "completed_with_errors"],
  pending: ["pending", "queued", "submitted", "received", "accepted", "new", "created", "waiting", "scheduled"],
  processing: ["processing", "in_progress", "inprogress", "running", "started", "validating", "working"],
};

const BY_SPELLING = new Map<string, EnrollmentRequestStatus>(
  Object.entries(SPELLINGS).flatMap(([status, names]) => names.map((n) => [n, status as EnrollmentRequestStatus] as const)),
);

/**
 * The documented status a raw one means. A status no spelling matches is `processing`: not
 * settled, so a poll goes on (and its timeout names the raw status) rather than guessing an outcome.
 *
 * @example
 * enrollmentStatus("COMPLETED")   // "succeeded"
 * enrollmentStatus("In Progress") // "processing"
 * enrollmentStatus("ON_HOLD")     // "processing"
 */
export function enrollmentStatus(raw: unknown): EnrollmentRequestStatus {
  if (typeof raw !== "string") return "processing";
  return BY_SPELLING.get(raw.trim().toLowerCase().replace(/[\s-]+/g, "_")) ?? "processing";
}
