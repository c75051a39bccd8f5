/**
 * Whether a failed write may nevertheless have been applied: its answer was lost (a reset, a
 * deadline, a gateway that gave up waiting), not refused. Such a write is never sent again blindly:
 * the caller looks first (the group listing, the member listing, the enrollment request).
 */
import { ServerError, TransportError } from "../errors.js";
import { PRE_CONNECT_CODES } from "./transport-errors.js";

/**
 * True for a connection fault once the request may have left (a reset, a deadline: not a refused
 * connection, which the transport already replays) and for a gateway's 502 or 504.
 *
 * @example
 * try { await client.createGroup(body) } catch (e) { if (answerLost(e)) lookBeforeSendingAgain() }
 */
export function answerLost(err: unknown): boolean {
  if (err instanceof TransportError) return !PRE_CONNECT_CODES.has(err.causeCode ?? "");
  // A gateway's 502 or 504 says it gave up waiting for the service, which may still have done it.
  return err instanceof ServerError && (err.status === 502 || err.status === 504);
}
