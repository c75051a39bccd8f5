/**
 * How the sandbox answers each write. The spec shows no answer body for terminate, add-dependent
 * and update-member, and only names what create group, add-subscriber and a poll carry; the real
 * service may answer any plausible shape. A run option picks one per write, so tests over loopback
 * can prove the client reads each of them (a write that succeeded must never look failed).
 */
import type { ServerResponse } from "node:http";
import { sendJson } from "./http-util.js";

export const AnswerShapeChoices = {
  createGroup: ["group", "groupPolicyId", "empty"],
  addSubscriber: ["accepted", "id", "request", "empty"],
  addDependent: ["accepted", "id", "request", "empty"],
  terminate: ["coverage", "member", "empty"],
  patchMember: ["member", "empty"],
  enrollmentStatus: ["documented", "upper"],
} as const;

export type AnswerShapes = { -readonly [K in keyof typeof AnswerShapeChoices]?: (typeof AnswerShapeChoices)[K][number] };

/** The statuses a poll shows under `enrollmentStatus: "upper"`, spelled as another service might. */
const UPPER: Readonly<Record<string, string>> = { pending: "PENDING", processing: "IN_PROGRESS", succeeded: "COMPLETED", failed: "FAILED" };

/** An enrollment request as a poll shows it. */
export function shownRequest<R extends { status: string }>(shapes: AnswerShapes, rec: R): R {
  return shapes.enrollmentStatus === "upper" ? { ...rec, status: UPPER[rec.status] ?? rec.status } : rec;
}

/** Answer create group: the group (201), `{groupPolicyId}` (201) or an empty 201. */
export function answerGroup(res: ServerResponse, shapes: AnswerShapes, group: { id: string }): void {
  const shape = shapes.createGroup ?? "group";
  if (shape === "empty") return empty(res, 201);
  sendJson(res, 201, shape === "groupPolicyId" ? { groupPolicyId: group.id } : group);
}

/** Answer add-subscriber or add-dependent: `{enrollmentRequestId}` (202), `{id}` (202), the whole request (201), or an empty 202. */
export function answerAccepted(res: ServerResponse, shape: AnswerShapes["addDependent"], request: { id: string; status: string }, shapes: AnswerShapes): void {
  if (shape === "empty") return empty(res, 202);
  if (shape === "request") return sendJson(res, 201, shownRequest(shapes, request));
  sendJson(res, 202, shape === "id" ? { id: request.id } : { enrollmentRequestId: request.id });
}

/** Answer terminate: the coverage (200), the member with its coverages (200), or a 204. */
export function answerTerminated(res: ServerResponse, shapes: AnswerShapes, coverage: object, member: object): void {
  const shape = shapes.terminate ?? "coverage";
  if (shape === "empty") return empty(res, 204);
  sendJson(res, 200, shape === "member" ? member : coverage);
}

/** Answer update-member: the member (200) or a 204. */
export function answerPatched(res: ServerResponse, shapes: AnswerShapes, member: object): void {
  if (shapes.patchMember === "empty") return empty(res, 204);
  sendJson(res, 200, member);
}

function empty(res: ServerResponse, status: number): void {
  res.writeHead(status, status === 204 ? {} : { "content-length": 0 });
  res.end();
}

/**
 * Read `write=shape,...` (the command line's `--answer-shapes`); each problem names the write or
 * the shape and lists the choices.
 *
 * @example
 * parseAnswerShapes("terminate=empty,enrollmentStatus=upper", problems) // { terminate: "empty", enrollmentStatus: "upper" }
 */
export function parseAnswerShapes(spec: string, problems: string[]): AnswerShapes {
  const out: Record<string, string> = {};
  for (const part of spec.split(",").map((p) => p.trim()).filter(Boolean)) {
    const [write = "", shape = ""] = part.split("=").map((s) => s.trim());
    const choices = (AnswerShapeChoices as Record<string, readonly string[]>)[write];
    if (!choices) problems.push(`--answer-shapes: unknown write ${JSON.stringify(write)}; expected one of ${Object.keys(AnswerShapeChoices).join(", ")}`);
    else if (!choices.includes(shape)) problems.push(`--answer-shapes: ${write} cannot answer ${JSON.stringify(shape)}; expected one of ${choices.join(", ")}`);
    else out[write] = shape;
  }
  return out as AnswerShapes;
}
