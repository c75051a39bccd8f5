/**
 * The one rule for speaking of a census cell: a message names the line (or the header), the
 * column and what is wrong, and may give the cell's shape (its length and kinds of characters),
 * never its text. A cell may hold an SSN, a name or a date of birth, and an `employee_id` is often
 * an SSN, so no census message quotes a cell: each is built from constants and {@link cellShape}.
 */

/** A cell's length and classes of characters, e.g. "9 characters, digits only"; never its text. */
export function cellShape(value: string): string {
  const n = [...value].length;
  const classes: string[] = [];
  if (/\p{L}/u.test(value)) classes.push("letters");
  if (/\p{N}/u.test(value)) classes.push("digits");
  if (/\s/u.test(value)) classes.push("spaces");
  if (/[^\p{L}\p{N}\s]/u.test(value)) classes.push("other characters");
  const kinds = classes.length === 1 ? `${classes[0]} only` : classes.join(", ");
  return n === 0 ? "empty" : `${n} character${n === 1 ? "" : "s"}, ${kinds}`;
}

/** A cell's value where a document holds it in its place (the result file's bodies): "(5 characters, letters only)". */
export const describedValue = (value: string): string => `(${cellShape(value)})`;

/** Where a cell is: a file line, or the header row's column number. */
export type CellPlace = { readonly line: number } | { readonly headerColumn: number };

/**
 * One cell described: "line 7, plan_id: not one of the group's plans (9 characters, digits only)".
 * `value`, when given, is shown only by its shape.
 */
export function describeCell(place: CellPlace, column: string, problem: string, value?: string): string {
  const where = "line" in place ? `line ${place.line}` : `header, column ${place.headerColumn}`;
  const shape = value === undefined ? "" : ` (${cellShape(value)})`;
  return `${where}${column ? `, ${column}` : ""}: ${problem}${shape}`;
}
