import { z } from "zod";
import { Id, IsoTimestamp, opt } from "./common.js";

/** A plan design (`GET /v2/designs`); `id` is the planDesignId. Unknown fields are kept. */
export const Design = z.looseObject({
  id: Id,
  name: opt(z.string()),
  planType: opt(z.string()),
  configuration: opt(z.record(z.string(), z.unknown())),
  // Every list is ordered by createdAt (spec, Limits 2): a design carries one too.
  createdAt: opt(IsoTimestamp),
});
export type Design = z.infer<typeof Design>;
