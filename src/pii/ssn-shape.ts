/**
 * Finding an SSN's shape in text, for the rule in ssn-key.ts (which decides what a shape is for):
 * 3-2-4 digits, each of the two separators one of `-`, space, U+00A0 NBSP, U+2010–U+2015, U+2212,
 * not inside a longer run of digits. `2024-01-15`, `+12015551234`, `12-3456789`, `62701-1234` and
 * UUIDs are not shapes.
 *
 * A first sync encodes millions of records, so the look is cheap: `indexOf` of each separator and
 * a few `charCodeAt` reads around each hit (a date costs two or three reads a dash), no regex over
 * every string. The regex runs only on a string that holds a shape.
 */

/** The shape, its three digit groups captured. */
export const SSN_SHAPE = /(?<!\d)(\d{3})[-\u0020\u00a0\u2010-\u2015\u2212](\d{2})[-\u0020\u00a0\u2010-\u2015\u2212](\d{4})(?!\d)/g;

// V8 answers `indexOf` of a two-byte character in a one-byte string without a scan: in the common
// (Latin-1) record only the first three cost a pass.
const SEPARATORS = ["-", " ", "\u00a0", "\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2015", "\u2212"];

function isSep(c: number): boolean {
  return c === 45 || c === 32 || c === 0xa0 || (c >= 0x2010 && c <= 0x2015) || c === 0x2212;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57; // NaN (outside the string) is not
}

/** Whether `s` has a shape whose first separator is at `i`. */
function shapeAt(s: string, i: number): boolean {
  return (
    isDigit(s.charCodeAt(i + 1)) &&
    isDigit(s.charCodeAt(i - 1)) &&
    isDigit(s.charCodeAt(i + 2)) &&
    isSep(s.charCodeAt(i + 3)) &&
    isDigit(s.charCodeAt(i - 2)) &&
    isDigit(s.charCodeAt(i - 3)) &&
    !isDigit(s.charCodeAt(i - 4)) &&
    isDigit(s.charCodeAt(i + 4)) &&
    isDigit(s.charCodeAt(i + 5)) &&
    isDigit(s.charCodeAt(i + 6)) &&
    isDigit(s.charCodeAt(i + 7)) &&
    !isDigit(s.charCodeAt(i + 8))
  );
}

/** Each index where a shape's first separator is, through `found` (which stops the look by returning true). */
function anyShape(s: string, found: (sepAt: number) => boolean): boolean {
  for (const sep of SEPARATORS) {
    for (let i = s.indexOf(sep, 3); i >= 0 && i + 7 < s.length; i = s.indexOf(sep, i + 1)) {
      if (shapeAt(s, i) && found(i)) return true;
    }
  }
  return false;
}

/** Whether a (decoded) string holds an SSN shape. */
export function hasSsnShape(s: string): boolean {
  return s.length >= 11 && anyShape(s, () => true);
}

/**
 * Whether a JSON text may hold a string with a shape in it. A `\u` escape of a digit or a
 * separator may hide one: then true. A shape that is the whole start of a key's string value, for
 * a key `takenWhole` says is masked whole by name (`"ssn":"123-45-6789"`), is not counted.
 */
export function mayHoldSsnShapeIn(json: string, takenWhole: (key: string) => boolean): boolean {
  if (escapesDigitOrSeparator(json)) return true;
  return anyShape(json, (i) => !startsNamedValue(json, i - 3, takenWhole));
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
