/**
 * `/_sandbox/*`: the sandbox's own controls (simulated days, faults, webhooks). Loopback only, no
 * key, never subject to faults.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import type { ChangeSet } from "./changes.js";
import { ListResources, type FaultPlan } from "./faults.js";
import { HttpError, readJson, sendJson, zodIssues } from "./http-util.js";
import type { WebhookSender } from "./webhooks.js";

export interface ControlContext {
  advance(): Promise<ChangeSet>;
  setFaults(plan: FaultPlan): void;
  faults(): FaultPlan;
  webhooks: WebhookSender;
  info(): unknown;
}

const Rate = z.union([z.number().min(0).max(1), z.object({ every: z.number().int().min(1) })]);
export const FaultPlanSchema = z.strictObject({
  seed: z.union([z.number(), z.string()]).optional(),
  pathPrefix: z.string().optional(),
  afterRequests: z.number().int().min(0).optional(),
  latencyMs: z.union([z.number().min(0), z.object({ min: z.number().min(0), max: z.number().min(0) })]).optional(),
  http400: Rate.optional(),
  http403: Rate.optional(),
  htmlErrors: z.boolean().optional(),
  http429: Rate.optional(),
  retryAfterSeconds: z.number().min(0).nullable().optional(),
  http500: Rate.optional(),
  http502: Rate.optional(),
  http503: Rate.optional(),
  errorMessage: z.string().optional(),
  errorIssues: z.array(z.strictObject({ path: z.array(z.union([z.string(), z.number()])), message: z.string(), code: z.string() })).optional(),
  reset: Rate.optional(),
  hang: Rate.optional(),
  lostAnswer: Rate.optional(),
  stuckCursorOn: z.enum(ListResources).optional(),
  pageSizeOverride: z.number().int().min(1).optional(),
  itemWithoutIdEvery: z.number().int().min(1).optional(),
  omitHasMore: z.boolean().optional(),
  extraFields: z.partialRecord(z.enum(ListResources), z.record(z.string(), z.unknown())).optional(),
});

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body ?? {});
  if (!r.success) throw new HttpError(400, "Validation failed", zodIssues(r.error.issues));
  return r.data;
}

export async function handleControl(ctx: ControlContext, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const p = url.pathname;
  const m = req.method;
  if (p === "/_sandbox/advance" && m === "POST") return sendJson(res, 200, await ctx.advance());
  if (p === "/_sandbox/faults" && m === "GET") return sendJson(res, 200, ctx.faults());
  if (p === "/_sandbox/faults" && m === "POST") {
    const plan = parse(FaultPlanSchema, await readJson(req)) as FaultPlan;
    ctx.setFaults(plan);
    return sendJson(res, 200, plan);
  }
  if (p === "/_sandbox/webhooks/configs" && m === "POST") {
    const body = await readJson(req);
    try {
      return sendJson(res, 201, ctx.webhooks.addConfig(body));
    } catch (e) {
      if (e instanceof z.ZodError) throw new HttpError(400, "Validation failed", zodIssues(e.issues));
      throw e;
    }
  }
  if (p === "/_sandbox/webhooks/configs" && m === "GET") return sendJson(res, 200, { data: ctx.webhooks.configs() });
  if (p === "/_sandbox/webhooks/deliveries" && m === "GET") return sendJson(res, 200, { data: ctx.webhooks.deliveries() });
  if (p === "/_sandbox/webhooks/events" && m === "GET") return sendJson(res, 200, { data: ctx.webhooks.events() });
  const retry = /^\/_sandbox\/webhooks\/events\/([^/]+)\/retry$/.exec(p);
  if (retry && m === "POST") {
    const out = ctx.webhooks.retry(decodeURIComponent(retry[1] as string));
    if (!out) throw new HttpError(404, `Event ${retry[1]} not found`);
    return sendJson(res, 202, { data: out });
  }
  if (p === "/_sandbox" || p === "/_sandbox/info") return sendJson(res, 200, ctx.info());
  throw new HttpError(404, `No route for ${m} ${p}`);
}
