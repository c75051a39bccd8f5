import { z } from "zod";
import { Id, opt } from "./common.js";

/** A plan design (`GET /v2/designs`); `id` is the planDesignId. Unknown fields are kept. */
export const Design = z.looseObject({
  id: Id,
  name: opt(z.string()),
  planType: opt(z.string()),
  configuration: opt(z.record(z.string(), z.unknown())),
});
export type Design = z.infer<typeof Design>;
