/**
 * The one definition of "this field holds a social security number", and of an SSN in free text.
 * The store tokenizes by it, every sink strips by it and every error text and log line masks by
 * it: three rules once let `dependentSsn` through one place and `ssnNumber` through another. It
 * imports nothing of ours, so that errors, store and sinks can all use it.
 */

/**
 * A key names an SSN when one of its words is `ssn` (or `ssns`, `ssn2`), or its words say
 * `social security`, or `ss` then `number`/`no`/`num`, in any case and separator style, at any
 * depth: `SSN`, `dependentSsn`, `ssn_number`, `SSN-No`, `spouseSSN`, `memberSSNs` (a list of
 * them), `socialSecurityNumber`, `social_security_no`, `SSNumber`. Words are split at separators
 * and at case changes, so `classname`, `lesson` and `assnId` are not. A key whose last word is
 * `token` or `last4` is what masking writes (`ssn_token`, `dependentSsn_last4`), not an SSN.
 *
 * Each distinct key is classified once (the canonical writer asks for every key of every record).
 *
 * @example isSsnKey("spouseSSN") === true; isSsnKey("ssn_token") === false
 */
export function isSsnKey(key: string): boolean {
  let known = memo.get(key);
  if (known === undefined) {
    // Keys come from the service: a bound keeps a server that invents keys from growing the memo.
    if (memo.size >= MEMO_LIMIT) memo.clear();
    known = classify(key);
    memo.set(key, known);
  }
  return known;
}

const MEMO_LIMIT = 10_000;
const memo = new Map<string, boolean>();

/** The words of a key: `memberSSNs` → member ssn; `SSNumber` → ss number; `SSN-No` → ssn no. */
export function keyWords(key: string): string[] {
  return key
    .replace(/([A-Z]{2,})s(?![a-z])/g, "$1 ") // an acronym's plural: SSNs
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
}

const NUMBER_WORD = /^(number|no|num|nbr)$/;

function classify(key: string): boolean {
  if (!/ss|social/i.test(key)) return false;
  const words = keyWords(key);
  const last = words[words.length - 1];
  if (last === "token" || last === "last4" || (last === "4" && words[words.length - 2] === "last")) return false;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (/^ssns?\d*$/.test(w)) return true;
    if (w === "social" && words[i + 1] === "security") return true;
    if (w === "ss" && NUMBER_WORD.test(words[i + 1] ?? "")) return true;
  }
  return false;
}

/** A text that may name an SSN key: cheap, and never false when one is in it. */
const MAY_NAME_SSN = /ss|social/i;

// A key as JSON.stringify writes it, that may name an SSN: each is then asked of the rule.
const JSON_KEY_MAY_NAME_SSN = /"((?:[^"\\]|\\.)*?(?:ss|social)(?:[^"\\]|\\.)*?)"\s*:/gi;

/**
 * Whether a JSON text (as JSON.stringify writes it) has a key the rule names, at any depth: only
 * such a text can hold a plain SSN. Cheap on a masked member: `ssn_token` and `ssn_last4` are
 * each asked of the memo.
 */
export function jsonHasSsnKey(json: string): boolean {
  JSON_KEY_MAY_NAME_SSN.lastIndex = 0;
  for (let m = JSON_KEY_MAY_NAME_SSN.exec(json); m !== null; m = JSON_KEY_MAY_NAME_SSN.exec(json)) if (isSsnKey(m[1]!)) return true;
  return false;
}

// Nine digits, bare or split 3-2-4 by dashes or spaces, not inside a longer run of digits: an SSN
// looks like any 9-digit id, and PHI wins, but a 13-digit timestamp is left alone.
const SSN_DIGITS = /(?<!\d)\d{3}[- ]?\d{2}[- ]?\d{4}(?!\d)/g;
// A key that may name an SSN (`"ssn":"..."`, JSON inside a JSON string, `ssn=...`, `ssnNumber: ...`,
// `spouse.socialSecurityNumber`), then its value, whatever it holds: a malformed SSN is still an
// SSN. A bare value must hold a digit, so that a sentence such as "ssn: expected 9 digits" stays
// readable. Whether the key is an SSN key is {@link isSsnKey}'s call.
const SSN_FIELD =
  /(\b([a-z0-9_-]*(?:ss|social)[a-z0-9_-]*)\\?["']?\s*[:=]\s*)(\\"(?:[^\\]|\\(?!"))*?(?:\\"|$)|"(?:[^"\\]|\\.)*"?|'[^']*'?|[^\s,;&)}\]"']*\d[^\s,;&)}\]"']*(?:\s\d[\d-]*)*)/gi;

function maskFieldValue(all: string, head: string, key: string, value: string): string {
  if (!isSsnKey(key)) return all;
  const quote = value.startsWith('\\"') ? '\\"' : value[0] === '"' || value[0] === "'" ? value[0] : "";
  return `${head}${quote}[ssn]${quote}`;
}

/**
 * Mask, in a free text, the value of every SSN key and every SSN-shaped number (any run of
 * exactly nine digits, also as 123-45-6789 or 123 45 6789). Linear in the text.
 *
 * @example maskSsnText('GET /v1/members/123456789 {"dependentSsn":"12-3"}') // 'GET /v1/members/[ssn] {"dependentSsn":"[ssn]"}'
 */
export function maskSsnText(text: string): string {
  const out = MAY_NAME_SSN.test(text) ? text.replace(SSN_FIELD, maskFieldValue) : text;
  return out.replace(SSN_DIGITS, "[ssn]");
}
