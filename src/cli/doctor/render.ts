/** Printing a doctor report: an aligned text table, or one JSON line. Pure. */
import type { DoctorReport } from "./checks.js";

/**
 * @example
 * renderTable(report, "https://svc.test")
 * // "service: https://svc.test\n\nendpoint          result  detail\nGET /v2/designs   ok      answered in 12 ms\n..."
 */
export function renderTable(report: DoctorReport, service: string): string {
  const header = ["endpoint", "result", "detail"] as const;
  const rows = report.checks.map((c) => [c.endpoint, c.result, c.detail] as const);
  const widths = [0, 1].map((i) => Math.max(header[i]!.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: readonly string[]) => `${r[0]!.padEnd(widths[0]!)}  ${r[1]!.padEnd(widths[1]!)}  ${r[2]}`.trimEnd();
  const out = [`service: ${service}`, "", line(header), ...rows.map(line), ""];
  const failing = report.checks.filter((c) => c.result !== "ok" && c.result !== "skipped").length;
  if (report.stoppedEarly) out.push("Stopped: the first call was refused (401), so the key is wrong; nothing else was tried.");
  else if (report.ok) out.push(`All ${report.checks.length} checks passed.`);
  else out.push(`${failing} of ${report.checks.length} checks did not pass.`);
  return `${out.join("\n")}\n`;
}

/** The report as one JSON line (contract.md: `--json` prints one JSON object on stdout). */
export function renderJson(report: DoctorReport, service: string): string {
  return `${JSON.stringify({ command: "doctor", service, ok: report.ok, stoppedEarly: report.stoppedEarly, checks: report.checks })}\n`;
}
