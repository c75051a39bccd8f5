import { z } from "zod";

/** A webhook delivery body. It never carries member data: the receiver refetches by `payload.id`. */
export const WebhookEvent = z.looseObject({
  id: z.string().min(1),
  type: z.string().min(1),
  payload: z.looseObject({ id: z.string().min(1) }),
});
export type WebhookEvent = z.infer<typeof WebhookEvent>;
