/**
 * The checks `benefits-sync doctor` makes: each read endpoint once. Rows carry endpoint templates
 * and statuses only, never data from an answer (no names, no member ids): the table may be pasted
 * into a support ticket.
 */
import { AuthError, BenefitsSyncError, NotFoundError, PermissionError, ApiError, TransportError } from "../../errors.js";
import { unwrapList } from "../../api/shape.js";

export const CHECK_RESULTS = ["ok", "forbidden", "auth failed", "failed", "skipped"] as const;
export type CheckResult = (typeof CHECK_RESULTS)[number];

export interface CheckRow {
  /** Method and path template, e.g. `GET /v1/members/{memberId}`. */
  readonly endpoint: string;
  readonly result: CheckResult;
  readonly status?: number | undefined;
  readonly latencyMs?: number | undefined;
  readonly detail: string;
}

export interface DoctorReport {
  readonly ok: boolean;
  /** The first call answered 401: nothing else was tried. */
  readonly stoppedEarly: boolean;
  readonly checks: readonly CheckRow[];
}

/** The slice of the client doctor needs. */
export interface JsonGetter {
  getJson(path: string, query?: Record<string, string | undefined>): Promise<unknown>;
}

export interface DoctorOptions {
  readonly claimDateParams: { readonly from: string; readonly to: string };
  /** The id field of a listed member (configuration: resources.members.idField). */
  readonly memberIdField: string;
  /** The single day the claims check asks for, YYYY-MM-DD. */
  readonly day: string;
  readonly now?: () => number;
}

export const FORBIDDEN_ADVICE = "the service operator must adjust your organization's permissions";
export const AUTH_ADVICE = "the key was refused: check BENEFITS_API_KEY (keys are per environment; a new key revokes the old one)";
/** A made-up id: a 404 for it proves the endpoint is reachable and the key may call it. */
const PROBE_ID = "00000000-0000-0000-0000-000000000000";

/**
 * Call each read endpoint once and classify the answers. Stops after the first call on a 401.
 *
 * @example
 * const report = await runDoctorChecks(client, { claimDateParams, memberIdField: "id", day: "2026-01-15" });
 * report.checks.map((c) => c.result) // ["ok", "ok", "ok", "forbidden", "ok", "ok"]
 */
export async function runDoctorChecks(client: JsonGetter, opts: DoctorOptions): Promise<DoctorReport> {
  const now = opts.now ?? (() => performance.now());
  const rows: CheckRow[] = [];
  const call = async (endpoint: string, path: string, query?: Record<string, string>, notFoundIsOk = false) => {
    const started = now();
    try {
      const body = await client.getJson(path, query);
      const latencyMs = Math.round(now() - started);
      rows.push({ endpoint, result: "ok", latencyMs, detail: `answered in ${latencyMs} ms` });
      return body;
    } catch (err) {
      rows.push(classify(endpoint, err, Math.round(now() - started), notFoundIsOk));
      return undefined;
    }
  };

  // limit=1: the answer is only looked at for one member id, so ask for as little data as possible.
  await call("GET /v2/designs", "/v2/designs", { limit: "1" });
  if (rows[0]?.result === "auth failed") return { ok: false, stoppedEarly: true, checks: rows };
  await call("GET /v2/groups", "/v2/groups", { limit: "1" });
  const members = await call("GET /v2/members", "/v2/members", { limit: "1" });
  await call("GET /v1/claims/medical", "/v1/claims/medical", {
    limit: "1",
    [opts.claimDateParams.from]: opts.day,
    [opts.claimDateParams.to]: opts.day,
  });
  const memberId = members === undefined ? undefined : firstId(members, opts.memberIdField);
  if (memberId === undefined) {
    rows.push({
      endpoint: "GET /v1/members/{memberId}",
      result: "skipped",
      detail: members === undefined ? "the member list failed" : "no member to fetch",
    });
  } else {
    await call("GET /v1/members/{memberId}", `/v1/members/${encodeURIComponent(memberId)}`);
  }
  await call("GET /v1/enrollmentRequests/{id}", `/v1/enrollmentRequests/${PROBE_ID}`, undefined, true);

  return { ok: rows.every((r) => r.result === "ok" || r.result === "skipped"), stoppedEarly: false, checks: rows };
}

function classify(endpoint: string, err: unknown, latencyMs: number, notFoundIsOk: boolean): CheckRow {
  const took = `in ${latencyMs} ms`;
  if (err instanceof NotFoundError && notFoundIsOk) {
    return { endpoint, result: "ok", status: 404, latencyMs, detail: `reachable: 404 for a made-up id ${took}` };
  }
  if (err instanceof AuthError) return { endpoint, result: "auth failed", status: 401, latencyMs, detail: `401 ${took}: ${AUTH_ADVICE}` };
  if (err instanceof PermissionError) return { endpoint, result: "forbidden", status: 403, latencyMs, detail: `403 ${took}: ${FORBIDDEN_ADVICE}` };
  // Only structured fields: a server message or a body excerpt could quote data.
  if (err instanceof ApiError) return { endpoint, result: "failed", status: err.status, latencyMs, detail: `${err.status} ${took} (${err.code})` };
  if (err instanceof TransportError) {
    return { endpoint, result: "failed", latencyMs, detail: `no answer ${took}: ${err.causeCode ?? "connection failed"} (${err.code})` };
  }
  if (err instanceof BenefitsSyncError) return { endpoint, result: "failed", latencyMs, detail: `${err.code} ${took}` };
  return { endpoint, result: "failed", latencyMs, detail: `unexpected ${err instanceof Error ? err.name : typeof err} ${took}` };
}

function firstId(body: unknown, idField: string): string | undefined {
  try {
    const first = unwrapList(body, "GET /v2/members").items[0];
    const id = first !== null && typeof first === "object" ? (first as Record<string, unknown>)[idField] : undefined;
    return typeof id === "string" && id !== "" ? id : undefined;
  } catch {
    return undefined;
  }
}
