/**
 * The one definition of "this holds a social security number", by three signals (issue 38): a key
 * whose words name one, a typed pair whose type names one, and an SSN's shape in free text. The
 * store tokenizes by it, every sink strips by it and every error text and log line masks by it:
 * the walkers ask, they decide nothing themselves (three rules once let `dependentSsn` through one
 * place and `ssnNumber` through another). It imports nothing of ours but its own helpers, so that
 * errors, store and sinks can all use it.
 *
 * What it leaves alone on purpose: an undashed nine-digit run in a field it does not name (a zip+4
 * written `627011234`, a claim number), dates, phone numbers, an EIN (`12-3456789`), a zip+4
 * (`62701-1234`), UUIDs; and a record's own id (the walkers skip it, see canonical.ts).
 */
import { hasSsnShape, mayHoldSsnShapeIn, SSN_SHAPE } from "./ssn-shape.js";

export { hasSsnShape } from "./ssn-shape.js";

/**
 * The version of this rule: a snapshot written under an older one is scrubbed in place by its
 * next run (store/pii/ssn-scrub.ts). Bump it with every change that recognises more. 1: `ssn` only;
 * 2: SSN names in any style; 3: identifier names, `last4`/`token` keys by their value, typed
 * pairs, shapes in free text.
 */
export const SSN_RULE_VERSION = "3";

/**
 * What a key says about its value: NAME holds an SSN; LAST4 and TOKEN are what masking writes
 * (`ssn_last4`, `taxId_token`) and hold one only when their value says so ({@link holdsMore});
 * TYPE and VALUE are the two halves of a typed pair (`{type: "SSN", value: "…"}`); OTHER is
 * anything else.
 */
export type KeyClass = "NAME" | "LAST4" | "TOKEN" | "TYPE" | "VALUE" | "OTHER";

/**
 * The class of a key. A key names an SSN when its words (split at separators and case changes,
 * `#` read as ` number `) name a social security, taxpayer or national identifier: a word `ssn…`;
 * `social security` (or one word `socialsecurity…`); `soc sec`; `ss` and a number word
 * (`number|no|num|nbr`); `SS#`; a word `tin`, `tins`, `itin`; a word `taxpayer…`; `tax` and an
 * id word (`id|identifier|identification|number|no|num`) or one word `taxid`; `national` and an
 * id word or one word `nationalid`. Any case, any separator style: `socSecNum`, `SS#`, `TIN`,
 * `taxpayerId`, `national_identifier`. Not: `settings`, `destination`, `tint`, `itinerary`,
 * `taxAmount`, `salesTax`, `taxonomyCode`, `nationality`, `nationalProviderId`,
 * `internationalId`, `ein`, `npi`, `claimNumber`, `id`. A key whose last word is `token`, or
 * `last4`/`last 4`, with the rest naming an SSN, is LAST4 or TOKEN. What masking writes in free
 * text (`[ssn:…]`, `[ssn]`) is no word of a key.
 *
 * Each distinct key is classified once (the canonical writer asks for every key of every record).
 *
 * @example keyClass("socSecNum") === "NAME"; keyClass("ssn_token") === "TOKEN"; keyClass("idType") === "TYPE"
 */
export function keyClass(key: string): KeyClass {
  let known = memo.get(key);
  if (known === undefined) {
    // Keys come from the service: a bound keeps a server that invents keys from growing the memo.
    if (memo.size >= MEMO_LIMIT) memo.clear();
    known = classify(key);
    memo.set(key, known);
  }
  return known;
}

/** Whether a key names an SSN (its value is one, whatever it holds): `keyClass(key) === "NAME"`. */
export function isSsnKey(key: string): boolean {
  return keyClass(key) === "NAME";
}

const MEMO_LIMIT = 10_000;
const memo = new Map<string, KeyClass>();

/** What masking writes in place of a shape; never read as a word of a key. */
const MASK_MARK = /\[ssn(?::[0-9a-f]{64})?\]/g;

/** The words of a key: `memberSSNs` → member ssn; `SSNumber` → ss number; `SS#` → ss number. */
export function keyWords(key: string): string[] {
  return key
    .replace(MASK_MARK, " ")
    .replace(/#/g, " number ")
    .replace(/([A-Z]{2,})s(?![a-z])/g, "$1 ") // an acronym's plural: SSNs
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
}

const NUMBER_WORD = /^(number|no|num|nbr)$/;
const ID_WORD = /^(id|identifier|identification|number|no|num)$/;
/** A text that may name an SSN: cheap, and never false when one is in it. */
const MAY_NAME_SSN = /ss|soc|tin|tax|national|#/i;
const TYPE_KEYS = new Set(["type", "kind", "name", "id_type", "identifier_type", "scheme"]);
const VALUE_KEYS = new Set(["value", "number", "id_number", "identifier", "num", "no"]);

function classify(key: string): KeyClass {
  const words = keyWords(key);
  const n = words.length;
  if (MAY_NAME_SSN.test(key)) {
    const last = words[n - 1];
    const rest = last === "token" || last === "last4" ? n - 1 : last === "4" && words[n - 2] === "last" ? n - 2 : -1;
    if (rest >= 0) return namesSsn(words, rest) ? (last === "token" ? "TOKEN" : "LAST4") : "OTHER";
    if (namesSsn(words, n)) return "NAME";
  }
  const joined = words.join("_");
  return TYPE_KEYS.has(joined) ? "TYPE" : VALUE_KEYS.has(joined) ? "VALUE" : "OTHER";
}

/** Whether the first `end` words name an SSN. */
function namesSsn(words: readonly string[], end: number): boolean {
  for (let i = 0; i < end; i++) {
    const w = words[i]!;
    const next = i + 1 < end ? words[i + 1]! : "";
    if (w.startsWith("ssn") || w.startsWith("socialsecurity") || w.startsWith("taxpayer")) return true;
    if ((w === "social" && next === "security") || (w === "soc" && next === "sec")) return true;
    if (w === "ss" && NUMBER_WORD.test(next)) return true;
    if (w === "tin" || w === "tins" || w === "itin" || w === "itins") return true;
    if (w === "taxid" || w === "taxids" || w === "nationalid" || w === "nationalids") return true;
    if ((w === "tax" || w === "national") && ID_WORD.test(next)) return true;
  }
  return false;
}

/** Whether a typed pair's type (`"SSN"`, `"Social Security Number"`, `"TIN"`), read as a key, names an SSN. */
export function typeNamesSsn(type: unknown): boolean {
  // Not memoised: types are data, and a long text is no type.
  return typeof type === "string" && type.length <= 64 && MAY_NAME_SSN.test(type) && classify(type) === "NAME";
}

const HEX64 = /^[0-9a-f]{64}$/i;

/**
 * Whether a LAST4 or TOKEN key's value holds more than masking writes there: a `…last4` value with
 * more than 4 digits, a `…token` value that is not exactly 64 hex characters but holds a digit
 * (a number always does). A list holds more when one of its elements does.
 */
export function holdsMore(cls: "LAST4" | "TOKEN", v: unknown): boolean {
  if (Array.isArray(v)) return v.some((e) => holdsMore(cls, e));
  const text = typeof v === "number" && Number.isFinite(v) ? String(v) : v;
  if (typeof text !== "string") return false;
  if (cls === "LAST4") return digitCount(text) > 4;
  return !HEX64.test(text) && digitCount(text) > 0;
}

function digitCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) n++;
  }
  return n;
}

const NONE: readonly string[] = [];

/**
 * The keys of an object whose values are SSNs, to mask (or drop) whole: keys that name one
 * (NAME), LAST4/TOKEN keys that hold more ({@link holdsMore}), and the VALUE keys of a typed pair
 * whose TYPE key's value names an SSN. Most objects have none: one memo look-up a key.
 *
 * @example ssnFieldsOf({type: "SSN", value: "123-45-6789", ssn_last4: "6789"}) // ["value"]
 */
export function ssnFieldsOf(obj: Readonly<Record<string, unknown>>, keys: readonly string[] = Object.keys(obj)): readonly string[] {
  let out: string[] | undefined;
  let typed = false;
  let values: string[] | undefined;
  for (let i = 0, n = keys.length; i < n; i++) {
    const k = keys[i]!;
    const cls = keyClass(k);
    if (cls === "OTHER") continue;
    if (cls === "NAME" || ((cls === "LAST4" || cls === "TOKEN") && holdsMore(cls, obj[k]))) (out ??= []).push(k);
    else if (cls === "TYPE") typed ||= typeNamesSsn(obj[k]);
    else if (cls === "VALUE") (values ??= []).push(k);
  }
  if (typed && values) (out ??= []).push(...values);
  return out ?? NONE;
}

/**
 * `s` with each SSN shape in it (3-2-4 digits split by `-`, a space, NBSP, U+2010–U+2015 or
 * U+2212, not inside a longer run of digits) replaced by `[ssn:<token>]` (`tokenOf` of its nine
 * digits), or by `[ssn]` without `tokenOf`. `s` itself when it holds none (the common case, found
 * without a regex).
 *
 * @example tokeniseSsnShapes("call re 123-45-6789", (d) => token(d)) // "call re [ssn:9f…]"
 */
export function tokeniseSsnShapes(s: string, tokenOf?: (digits: string) => string): string {
  if (!hasSsnShape(s)) return s;
  return s.replace(SSN_SHAPE, (_all, a: string, b: string, c: string) => (tokenOf ? `[ssn:${tokenOf(a + b + c)}]` : "[ssn]"));
}

/**
 * A cheap look at a record's raw JSON text: false when no string in it (value, list element or
 * key) can hold an SSN shape that masking by name would not take whole anyway, so that the
 * walkers need not look at each string. Never false when one is there.
 */
export function mayHoldSsnShape(raw: string): boolean {
  return mayHoldSsnShapeIn(raw, (key) => {
    const cls = keyClass(key);
    return cls === "NAME" || cls === "LAST4" || cls === "TOKEN";
  });
}

// A key as JSON.stringify writes it that may matter to the rule (a name, masking's own keys, a
// typed pair's type): each is then asked of the memo.
const JSON_KEY = /"((?:[^"\\]|\\.)*?(?:ss|soc|tin|tax|national|#|type|kind|name|scheme)(?:[^"\\]|\\.)*?)"\s*:\s*/gi;

/**
 * Whether a JSON text (as JSON.stringify writes it) may hold a plain SSN, at any depth: a key that
 * names one, a LAST4/TOKEN key holding more, a typed pair's type naming one, or a shape. Cheap on a
 * masked member (`ssn_token` and `ssn_last4` hold what masking writes): the sinks serve such a
 * text as stored.
 */
export function jsonMayHoldSsn(json: string): boolean {
  JSON_KEY.lastIndex = 0;
  for (let m = JSON_KEY.exec(json); m !== null; m = JSON_KEY.exec(json)) {
    const cls = keyClass(m[1]!);
    if (cls === "NAME") return true;
    if (cls === "OTHER" || cls === "VALUE") continue;
    const value = jsonValueAt(json, JSON_KEY.lastIndex);
    if (value === MAYBE) return true;
    if (cls === "TYPE" ? typeNamesSsn(value) : holdsMore(cls, value)) return true;
  }
  return mayHoldSsnShapeIn(json, () => false);
}

const MAYBE = Symbol("maybe");

/** The scalar JSON value at `i` (a string without escapes, a number, null); MAYBE for anything else. */
function jsonValueAt(json: string, i: number): unknown {
  const c = json[i];
  if (c === '"') {
    const end = json.indexOf('"', i + 1);
    const s = end < 0 ? "" : json.slice(i + 1, end);
    return end < 0 || s.includes("\\") ? MAYBE : s;
  }
  if (c === "n" || c === "t" || c === "f") return null;
  const num = /^-?[0-9][0-9.eE+-]*/.exec(json.slice(i, i + 40));
  return num ? Number(num[0]) : MAYBE;
}

// Nine digits, bare or split 3-2-4 by separators, not inside a longer run of digits: in a message
// an SSN looks like any 9-digit id, and PHI wins, but a 13-digit timestamp is left alone.
const SEP = "[-\\u0020\\u00a0\\u2010-\\u2015\\u2212]";
const SSN_DIGITS = new RegExp(`(?<!\\d)\\d{3}${SEP}?\\d{2}${SEP}?\\d{4}(?!\\d)`, "g");
const MAY_NAME_IN_TEXT = /ss|soc|tin|tax|national/i;
// A key that may name an SSN (`"ssn":"..."`, JSON inside a JSON string, `ssn=...`, `taxId: ...`,
// `spouse.socialSecurityNumber`, `SS#: ...`), then its value, whatever it holds: a malformed SSN
// is still an SSN. A bare value must hold a digit, so that a sentence such as "ssn: expected 9
// digits" stays readable. Not what masking wrote (`[ssn:…]`). Whether the key is an SSN key, and
// whether a LAST4/TOKEN key's value holds more, is the rule's call.
const SSN_FIELD =
  /(\b(?!(?<=\[)ssn:[0-9a-f]{64}\])([a-z0-9_#-]*(?:ss|soc|tin|tax|national)[a-z0-9_#-]*)\\?["']?\s*[:=]\s*)(\\"(?:[^\\]|\\(?!"))*?(?:\\"|$)|"(?:[^"\\]|\\.)*"?|'[^']*'?|[^\s,;&)}\]"']*\d[^\s,;&)}\]"']*(?:\s\d[\d-]*)*)/gi;

function maskFieldValue(all: string, head: string, key: string, value: string): string {
  const cls = keyClass(key);
  const quote = value.startsWith('\\"') ? '\\"' : value[0] === '"' || value[0] === "'" ? value[0] : "";
  if (cls === "LAST4" || cls === "TOKEN") {
    const bare = value.slice(quote.length, value.endsWith(quote) && value.length >= 2 * quote.length ? value.length - quote.length : undefined);
    if (!holdsMore(cls, bare)) return all;
  } else if (cls !== "NAME") return all;
  return `${head}${quote}[ssn]${quote}`;
}

/**
 * Mask, in a free text, the value of every SSN key and every SSN-shaped number (any run of
 * exactly nine digits, also split 3-2-4 by the separators of a shape). Linear in the text.
 *
 * @example maskSsnText('GET /v1/members/123456789 {"taxId":"12-3"}') // 'GET /v1/members/[ssn] {"taxId":"[ssn]"}'
 */
export function maskSsnText(text: string): string {
  const out = MAY_NAME_IN_TEXT.test(text) ? text.replace(SSN_FIELD, maskFieldValue) : text;
  return out.replace(SSN_DIGITS, "[ssn]");
}
