/**
 * The service's today, for the default claims window. The service is on the real calendar, so a
 * sync's window ends on the real date and nothing is asked of it. A benefits-sync sandbox lives on
 * its own calendar (`--today`, `sandbox advance`), and its control routes answer on loopback only:
 * so when the base URL is a loopback address, the sync asks `GET /_sandbox/info` (no key) and, if
 * a sandbox answers, its today ends the window. Anything else (not loopback, no answer, not a
 * sandbox) leaves the real date.
 */
import { request } from "undici";
import { isCalendarDay } from "../calendar-day.js";

/** How long a loopback address may take to say whether it is a sandbox. */
const ASK_MS = 5_000;

/** Hosts that can only be this machine (URL.hostname keeps the brackets of an IPv6 address). */
function isLoopbackHost(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** `YYYY-MM-DD` that is a real calendar day. */
function isDay(s: unknown): s is string {
  return typeof s === "string" && isCalendarDay(s);
}

/**
 * The sandbox's today (a Date at its midnight UTC) when `baseUrl` is a sandbox on loopback;
 * undefined otherwise, and for a real service nothing is sent.
 *
 * @example const today = await sandboxToday("http://127.0.0.1:4010"); // 2026-12-04 after `sandbox advance --days 7`
 */
export async function sandboxToday(baseUrl: string): Promise<Date | undefined> {
  let url: URL;
  try {
    url = new URL("/_sandbox/info", baseUrl);
  } catch {
    return undefined;
  }
  if (!isLoopbackHost(url.hostname)) return undefined;
  try {
    const res = await request(url, { method: "GET", headersTimeout: ASK_MS, bodyTimeout: ASK_MS, signal: AbortSignal.timeout(ASK_MS) });
    const text = await res.body.text();
    if (res.statusCode !== 200) return undefined;
    const today = (JSON.parse(text) as { today?: unknown } | null)?.today;
    return isDay(today) ? new Date(`${today}T00:00:00Z`) : undefined;
  } catch {
    return undefined;
  }
}
