/**
 * Telling a chat channel what needs a person: a job that failed, and fields the service added
 * without notice (said once on stderr, which nobody reads under cron). `notify.url` (or the
 * variable `notify.urlEnv` names) receives one short JSON message, `{"text": "..."}`, which Slack's
 * incoming webhooks and most chat bridges take as is.
 *
 * The text is built only from what is already safe to print: the job's name, the run id, error
 * codes and messages that went through redact() (no key, no SSN, no person's data), and field
 * paths (never a value). A notification that does not land is a warning naming the receiver by
 * host and port only (a chat webhook's path is its token): it never fails the job.
 */
import { request } from "undici";
import { ConfigError, redact, registerSecret } from "../errors.js";
import { newFieldsNotice } from "../pipeline/new-fields-notice.js";
import { hostAndPort } from "../url-display.js";
import { whyFailed } from "./fire-detail.js";
import type { JobReport } from "./run-job.js";

/** Long enough for a chat service across the internet, short enough that a dead one does not hold a job. */
export const NOTIFY_TIMEOUT_MS = 5_000;

type NotifySettings = { readonly url?: string | undefined; readonly urlEnv?: string | undefined } | undefined;

/**
 * The notify URL of the configuration, `urlEnv` read from `env`; undefined when none is configured.
 * A ConfigError (exit 2, nothing done) when `urlEnv` names a variable that is unset or holds no http(s) URL.
 *
 * @example notifyUrl({ urlEnv: "SLACK_WEBHOOK_URL" }, process.env) // "https://hooks.slack.com/services/..."
 */
export function notifyUrl(notify: NotifySettings, env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (!notify) return undefined;
  if (notify.url !== undefined) return notify.url;
  const value = env[notify.urlEnv!]?.trim();
  if (!value) throw new ConfigError([`notify.urlEnv: the environment variable ${notify.urlEnv} is not set; set it to the chat webhook's URL, or remove notify`]);
  registerSecret(value);
  if (!/^https?:\/\/\S+$/.test(value) || !URL.canParse(value)) throw new ConfigError([`notify.urlEnv: ${notify.urlEnv} does not hold an http(s) URL`]);
  return value;
}

/**
 * What a job's end has to tell, or undefined when nothing: a failure (not a stop by signal, not a
 * snapshot another run held), and the field paths the run was the first to see.
 *
 * @example notifyText("nightly-claims-export", report) // "benefits-sync nightly-claims-export, run 12: failed: the run failed (AUTH_FAILED): ..."
 */
export function notifyText(job: string, report: JobReport): string | undefined {
  if (report.status === "busy" || report.error?.code === "INTERRUPTED") return undefined;
  const reconcile = "reconcile" in report;
  const head = `benefits-sync ${job}${report.runId === null ? "" : `, ${reconcile ? "report" : "run"} ${report.runId}`}`;
  const parts: string[] = [];
  const why = whyFailed(report);
  if (why) parts.push(`failed: ${why}`);
  if (!reconcile && report.runId !== null && report.newFields?.length) parts.push(newFieldsNotice(report.runId, report.newFields));
  return parts.length > 0 ? redact(`${head}: ${parts.join(" ")}`) : undefined;
}

/** A job's fire that failed before its run could report (the scheduler's last resort). */
export function notifyThrownText(job: string, why: string): string {
  return redact(`benefits-sync ${job}: failed: ${why}`);
}

/**
 * POST `{"text": text}` to `url`; resolves to a warning when it did not land (never rejects).
 *
 * @example const problem = await postNotify(url, text); if (problem) warn(problem);
 */
export async function postNotify(url: string, text: string, timeoutMs = NOTIFY_TIMEOUT_MS): Promise<string | undefined> {
  const to = `notify: the message to ${hostAndPort(url) ?? "(an unreadable URL)"}`;
  const hint = "(a notification never fails the job; check notify in the config)";
  try {
    const res = await request(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text }),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body.dump();
    return res.statusCode >= 200 && res.statusCode < 300 ? undefined : `${to} was answered ${res.statusCode} ${hint}`;
  } catch (e) {
    // The client's text may quote the URL whole: its path is the receiver's token.
    const why = (e instanceof Error ? e.message : String(e)).split(url).join(hostAndPort(url) ?? "");
    return redact(`${to} could not be delivered: ${why} ${hint}`);
  }
}

/** Tell `url` about `report` when it has something to tell; the warning when that failed. */
export async function notifyJob(url: string | undefined, job: string, report: JobReport): Promise<string | undefined> {
  const text = url ? notifyText(job, report) : undefined;
  return text ? postNotify(url!, text) : undefined;
}
