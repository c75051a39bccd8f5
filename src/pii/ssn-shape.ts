/**
 * Finding an SSN's shape in text, for the rule in ssn-key.ts (which decides what a shape is for):
 * 3-2-4 digits, each of the two separators one of `-`, space, U+00A0 NBSP, U+2010–U+2015, U+2212,
 * not inside a longer run of digits. `2024-01-15`, `+12015551234`, `12-3456789`, `62701-1234` and
 * UUIDs are not shapes.
 *
 * A first sync encodes millions of records, so the look is once per record, over its raw text,
 * and the walkers look at each string only when it says yes. It is one regex pass (V8's irregexp,
 * native code): bench/ssn-shape.ts measured it faster than `indexOf` of each separator with
 * `charCodeAt` reads around each hit (an `indexOf` of a separator outside Latin-1 costs a pass of
 * its own, and a member's UUIDs and dates make some twenty dash hits), see docs/benchmarks.md.
 */

const SEP = "[-\\u0020\\u00a0\\u2010-\\u2015\\u2212]";
const SHAPE = `(?<!\\d)(\\d{3})${SEP}(\\d{2})${SEP}(\\d{4})(?!\\d)`;
/** The shape, its three digit groups captured (global: for `replace`). */
export const SSN_SHAPE = new RegExp(SHAPE, "g");
// Without captures: a match allocates less.
const FIND = SHAPE.replace(/\((?!\?)/g, "(?:");
const SHAPE_TEST = new RegExp(FIND);
const SHAPE_SCAN = new RegExp(FIND, "g");

function isSep(c: number): boolean {
  return c === 45 || c === 32 || c === 0xa0 || (c >= 0x2010 && c <= 0x2015) || c === 0x2212;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57; // NaN (outside the string) is not
}

/** Whether a (decoded) string holds an SSN shape. */
export function hasSsnShape(s: string): boolean {
  return s.length >= 11 && SHAPE_TEST.test(s);
}

/**
 * Whether a JSON text may hold a string with a shape in it. A `\u` escape of a digit or a
 * separator may hide one: then true. A shape that starts a key's string value, for a key
 * `takenWhole` says is masked whole by name (`"ssn":"123-45-6789"`), is not counted.
 */
export function mayHoldSsnShapeIn(json: string, takenWhole: (key: string) => boolean): boolean {
  if (escapesDigitOrSeparator(json)) return true;
  SHAPE_SCAN.lastIndex = 0;
  for (let m = SHAPE_SCAN.exec(json); m !== null; m = SHAPE_SCAN.exec(json)) {
    if (!startsNamedValue(json, m.index, takenWhole)) return true;
  }
  return false;
}

function escapesDigitOrSeparator(json: string): boolean {
  for (let i = json.indexOf("\\u"); i >= 0; i = json.indexOf("\\u", i + 2)) {
    const c = parseInt(json.slice(i + 2, i + 6), 16);
    if (isDigit(c) || isSep(c)) return true;
  }
  return false;
}

/** Whether the string value starting at `start` (just after its quote) belongs to a key masked whole. */
function startsNamedValue(json: string, start: number, takenWhole: (key: string) => boolean): boolean {
  let j = start - 1;
  if (json[j] !== '"') return false;
  j--;
  while (json[j] === " ") j--;
  if (json[j] !== ":") return false;
  j--;
  while (json[j] === " ") j--;
  if (json[j] !== '"' || json[j - 1] === "\\") return false;
  const open = json.lastIndexOf('"', j - 1);
  if (open < 0 || json[open - 1] === "\\") return false;
  return takenWhole(json.slice(open + 1, j));
}
