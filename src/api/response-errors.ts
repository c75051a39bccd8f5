import { ErrorBody } from "../../schemas/error-body.js";
import {
  ApiError,
  AuthError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServerError,
  type ApiErrorFields,
  redact,
  type BenefitsSyncError,
} from "../errors.js";
import { bodyView, errorBodyView } from "./body-view.js";
import { shownPath } from "./people-endpoints.js";

/**
 * Map an error answer to its typed error: 400/409/other 4xx `ApiError` (with the Zod issues of a
 * validation failure), 401 `AuthError`, 403 `PermissionError`, 404 `NotFoundError`, 429
 * `RateLimitError`, 5xx `ServerError`. The server's `message` and `timestamp` are kept (redacted),
 * except from an endpoint that carries people: there the answer is described (the number of
 * `errors` entries and their field paths), never quoted, and the path's query values that could
 * identify a person are withheld.
 *
 * A body that is not JSON (an HTML page from a proxy) still maps by its status, as an empty one
 * does: the status is the answer (a 403 is refused, a 400 rejected, whatever the page says), and
 * only a 502 or 504 says the answer was lost (`answerLost`). The message shows a short redacted
 * excerpt of the page, or only its shape when the endpoint carries people (a members or claims
 * page, an enrollment).
 *
 * @example
 * errorFromResponse({ status: 404, method: "GET", path: "/v1/members/x", text: '{"message":"no member"}' })
 * // NotFoundError: GET /v1/members/x answered 404: no member
 */
export function errorFromResponse(res: {
  status: number;
  method: string;
  path: string;
  text: string;
  retryAfterMs?: number | undefined;
}): BenefitsSyncError {
  const fields: { -readonly [K in keyof ApiErrorFields]: ApiErrorFields[K] } = {
    status: res.status,
    method: res.method,
    path: redact(shownPath(res.path)),
    retryAfterMs: res.retryAfterMs,
  };
  if (res.text.trim() !== "") {
    let body: unknown;
    try {
      body = JSON.parse(res.text);
    } catch {
      // A status is an answer whatever the body: a proxy's HTML 403 is a refusal, not a lost answer.
      fields.notJson = bodyView(res.text, res.path);
    }
    const parsed = ErrorBody.safeParse(body);
    if (parsed.success) {
      Object.assign(fields, { timestamp: parsed.data.timestamp }, errorBodyView(parsed.data, res.path));
    } else if (body !== null && typeof body === "object") {
      // Not the documented shape: keep whatever message there is rather than losing the status.
      const message = (body as Record<string, unknown>).message ?? (body as Record<string, unknown>).error;
      if (typeof message === "string") fields.serverMessage = errorBodyView({ message }, res.path).serverMessage;
    }
  }
  switch (true) {
    case res.status === 401:
      return new AuthError(fields);
    case res.status === 403:
      return new PermissionError(fields);
    case res.status === 404:
      return new NotFoundError(fields);
    case res.status === 429:
      return new RateLimitError(fields);
    case res.status >= 500:
      return new ServerError(fields);
    default:
      return new ApiError(fields);
  }
}
