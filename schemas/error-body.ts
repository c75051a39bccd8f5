import { z } from "zod";

/** One entry of a 400's `errors` array: Zod's issue shape. */
export const ValidationIssue = z.looseObject({
  path: z.array(z.union([z.string(), z.number()])),
  message: z.string(),
  code: z.string().optional(),
});
export type ValidationIssue = z.infer<typeof ValidationIssue>;

/** Every error the service answers: `{timestamp, path, message}`, plus `errors` on validation failures. */
export const ErrorBody = z.looseObject({
  timestamp: z.string().optional(),
  path: z.string().optional(),
  message: z.string(),
  errors: z.array(ValidationIssue).optional(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;
