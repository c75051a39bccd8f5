import { csvRow } from "../sinks/csv/csv-row.js";

/**
 * One CSV record of the reconciliation's files, which people open in a spreadsheet: a cell
 * beginning with `=`, `+`, `-`, `@`, a tab or a CR starts with `'` instead, so a name such as
 * `=HYPERLINK(…)` is shown as text, never run as a formula (OWASP, "CSV injection"). A plain number
 * (`-12.50`, `-3`) stays a number. The delta files are not written here: they stay byte-faithful.
 *
 * @example sheetRow(["=1+1", "-12.50", "@x"]) // "'=1+1,-12.50,'@x\r\n"
 */
export function sheetRow(fields: readonly string[]): string {
  return csvRow(fields.map(sheetCell));
}

const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^-?\d+(\.\d+)?$/;

function sheetCell(v: string): string {
  return FORMULA_START.test(v) && !PLAIN_NUMBER.test(v) ? `'${v}` : v;
}
