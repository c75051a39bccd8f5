/** Printing a doctor report (and the new field paths the snapshot recorded): aligned text tables, or one JSON line. Pure. */
import type { DoctorReport } from "./checks.js";
import type { NewFieldsSeen } from "./new-fields.js";
import { maskedNote } from "../../pipeline/new-fields-notice.js";
import { failsDoctor, type PiiKeyLine } from "./pii-key.js";

/** Rows as columns two spaces apart, each as wide as its longest cell; the last column ragged. */
function aligned(rows: readonly (readonly string[])[]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((v, i) => (i < r.length - 1 ? v.padEnd(widths[i]!) : v)).join("  ").trimEnd());
}

/**
 * @example
 * renderTable(report, "https://svc.test")
 * // "service: https://svc.test\n\nendpoint          result  detail\nGET /v2/designs   ok      answered in 12 ms\n..."
 */
export function renderTable(report: DoctorReport, service: string, seen?: NewFieldsSeen): string {
  const table = aligned([["endpoint", "result", "detail"], ...report.checks.map((c) => [c.endpoint, c.result, c.detail])]);
  const out = [`service: ${service}`, "", ...table, ""];
  const failing = report.checks.filter((c) => c.result !== "ok" && c.result !== "skipped").length;
  if (report.stoppedEarly) out.push("Stopped: the first call was refused (401), so the key is wrong; nothing else was tried.");
  else if (report.ok) out.push(`All ${report.checks.length} checks passed.`);
  else out.push(`${failing} of ${report.checks.length} checks did not pass.`);
  return `${out.join("\n")}\n${seen ? `\n${renderNewFields(seen)}` : ""}`;
}

/** The report as one JSON line (contract.md: `--json` prints one JSON object on stdout). */
export function renderJson(report: DoctorReport, service: string, seen?: NewFieldsSeen, piiKey?: PiiKeyLine): string {
  const fields = seen ? { newFields: seen.fields, ...(seen.problem ? { newFieldsProblem: seen.problem } : {}) } : {};
  const ok = report.ok && !failsDoctor(piiKey);
  return `${JSON.stringify({ command: "doctor", service, ok, stoppedEarly: report.stoppedEarly, checks: report.checks, ...fields, ...(piiKey ? { piiKey } : {}) })}\n`;
}

/**
 * The field paths the service added without notice, as the snapshot recorded them, or why none.
 *
 * @example
 * renderNewFields({ db, fields: [{ resource: "members", path: "pronouns", firstRunId: 2, firstSeenAt: "2026-11-24T02:00:00.000Z", masked: null }] })
 * // "New fields the service sent without notice (stored as sent; paths only):\nresource  path      first run  first seen                masked\nmembers   pronouns  2          2026-11-24T02:00:00.000Z\n"
 */
export function renderNewFields(seen: NewFieldsSeen): string {
  if (seen.problem) return `New fields: the snapshot could not be read (${seen.problem}).\n`;
  if (seen.noSnapshot) return `New fields: none seen (no snapshot yet at ${seen.db}).\n`;
  if (seen.fields.length === 0) return "New fields: none seen.\n";
  const rows = seen.fields.map((f) => [f.resource, f.path, String(f.firstRunId), f.firstSeenAt, maskedNote(f.path, f.masked)]);
  const stored = seen.fields.some((f) => f.masked) ? "stored as sent, but for what the SSN rule masked" : "stored as sent";
  return [`New fields the service sent without notice (${stored}; paths only):`, ...aligned([["resource", "path", "first run", "first seen", "masked"], ...rows]), ""].join("\n");
}
