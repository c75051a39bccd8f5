/**
 * What a delivery's body must be (spec: Delivery 2): a JSON object with the event's `id`, its
 * `type`, and a `payload` object whose `id` names the changed object. A `member_update` without a
 * member id is unusable and refused (400); another type is kept for the record whatever its payload.
 * Fields beyond these are tolerated: the service may add some, and only the id is ever trusted.
 */
import { z } from "zod";
import type { InboxEvent } from "./inbox.js";

const Id = z.string().min(1).max(256);
const Body = z.object({
  id: Id,
  type: z.string().min(1).max(128),
  payload: z.looseObject({ id: Id.optional() }),
});

export type BodyCheck = { readonly ok: true; readonly event: InboxEvent } | { readonly ok: false; readonly problem: string };

/**
 * Read a verified body into the inbox's event, or say what is wrong with it (for the 400's body:
 * field names only, never values, so nothing the sender sent is echoed).
 *
 * @example eventFromBody(Buffer.from('{"id":"evt_1","type":"member_update","payload":{"id":"m1"}}'), now)
 * // { ok: true, event: { id: "evt_1", type: "member_update", memberId: "m1", receivedAt: now } }
 */
export function eventFromBody(body: Buffer, receivedAt: string): BodyCheck {
  let json: unknown;
  try {
    json = JSON.parse(body.toString("utf8"));
  } catch {
    return { ok: false, problem: "the body is not JSON" };
  }
  const r = Body.safeParse(json);
  if (!r.success) {
    const fields = [...new Set(r.error.issues.map((i) => i.path.join(".") || "(body)"))];
    return { ok: false, problem: `expected {"id": string, "type": string, "payload": {"id": string}}; wrong or missing: ${fields.join(", ")}` };
  }
  const { id, type, payload } = r.data;
  if (type === "member_update" && payload.id === undefined) return { ok: false, problem: "a member_update needs payload.id, the member's id" };
  return { ok: true, event: { id, type, memberId: type === "member_update" ? (payload.id ?? null) : null, receivedAt } };
}
