/**
 * What a stored record should hold in place of each SSN, worked out here and not by the product's
 * rule (a test whose expected value came from `maskPii` passed with an empty HMAC key; a test that
 * asked `isSsnKey` would agree with any mistake of it). This is the contract of issue 38 written
 * again from its text, with its own word split and its own patterns; nothing of src/pii or
 * src/store/pii/pii.ts is imported. `test/unit/pii/ssn-oracle.test.ts` holds it to the contract's lists.
 *
 * - names: a key whose words name a social security, taxpayer or national identifier holds an SSN;
 *   a key ending in `token`/`last4` whose rest names one is what masking writes, unless its value
 *   says otherwise (a `last4` with more than 4 digits; a `token` not 64 hex that holds a digit);
 * - typed pairs: `{type: "SSN", value: "…"}` (and kind/name/idType/scheme, number/identifier/…);
 * - shapes: a 3-2-4 digit group with separators from {-, space, NBSP, U+2010-U+2015, U+2212} in
 *   any text (a value, a list element, an object key) becomes `[ssn:<token>]` in place.
 *
 * A key that holds an SSN becomes `<key>_last4` (the last four digits) and `<key>_token`
 * (HMAC-SHA256 of its digits under the PII key, hex); a list gives a list of each; a value that
 * is neither text nor a number gives nulls.
 */
import { createHmac } from "node:crypto";

/** The separators an SSN shape may have between its groups (each of the two, any of them). */
export const SSN_SEPARATORS = ["-", " ", "\u00a0", "\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2015", "\u2212"] as const;
const SEP = "[\\- \\u00a0\\u2010-\\u2015\\u2212]";
/** An SSN in free text: 3-2-4 digits with a separator between groups, not inside a longer run of digits. */
export const SSN_SHAPE = new RegExp(`(?<!\\d)\\d{3}${SEP}\\d{2}${SEP}\\d{4}(?!\\d)`, "g");

/** The token of an SSN, dashed or not: HMAC-SHA256 of its digits under `key`, in hex. */
export function expectedSsnToken(ssn: string, key: Buffer): string {
  return createHmac("sha256", key).update(ssn.replace(/\D/g, "")).digest("hex");
}

/** The words of a key, by the contract: split at separators and case changes, `#` read as ` number `. */
export function oracleWords(key: string): string[] {
  return key
    .replace(/#/g, " number ")
    .replace(/([A-Z]{2,})s(?=[^a-z]|$)/g, "$1 ") // an acronym's plural: memberSSNs -> member SSN
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2") // socSec -> soc Sec; ssnLast4 -> ssn Last4
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2") // SSNumber -> SS Number
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "");
}

const SS_NUMBER = new Set(["number", "no", "num", "nbr"]);
const ID_WORD = new Set(["id", "identifier", "identification", "number", "no", "num"]);

/** Whether these words name a social security, taxpayer or national identifier (rule 1, before the token/last4 exception). */
function wordsName(w: readonly string[]): boolean {
  return w.some((x, i) => {
    const next = w[i + 1] ?? "";
    if (x.startsWith("ssn") || x.startsWith("socialsecurity") || x.startsWith("taxpayer")) return true;
    if (x === "tin" || x === "tins" || x === "itin" || x === "taxid" || x === "nationalid") return true;
    if (x === "social" && next === "security") return true;
    if (x === "soc" && next === "sec") return true;
    if (x === "ss" && SS_NUMBER.has(next)) return true;
    return (x === "tax" || x === "national") && ID_WORD.has(next);
  });
}

/** `[rest, "token" | "last4"]` for a key in the form masking writes, else undefined. */
function maskedForm(w: readonly string[]): [readonly string[], "token" | "last4"] | undefined {
  const last = w[w.length - 1];
  if (last === "token" || last === "last4") return [w.slice(0, -1), last];
  if (last === "4" && w[w.length - 2] === "last") return [w.slice(0, -2), "last4"];
  return undefined;
}

/** Whether a key names an SSN by its words alone (a masked form such as `ssn_token` does not). */
export function namesSsn(key: string): boolean {
  const w = oracleWords(key);
  return maskedForm(w) === undefined && wordsName(w);
}

/** Whether `key` holding `value` holds an SSN by rule 1: its name, or a masked form whose value says otherwise. */
export function holdsSsn(key: string, value: unknown): boolean {
  const w = oracleWords(key);
  const form = maskedForm(w);
  if (form === undefined) return wordsName(w);
  if (!wordsName(form[0])) return false;
  const says = (v: unknown): boolean => {
    if (Array.isArray(v)) return v.some(says);
    const text = typeof v === "number" && Number.isFinite(v) ? String(v) : v;
    if (typeof text !== "string") return false;
    if (form[1] === "last4") return text.replace(/\D/g, "").length > 4;
    return !/^[0-9a-f]{64}$/i.test(text) && /\d/.test(text);
  };
  return says(value);
}

const TYPE_KEYS = new Set(["type", "kind", "name", "idType", "id_type", "identifierType", "scheme"]);
const VALUE_KEYS = new Set(["value", "number", "idNumber", "id_number", "identifier", "num", "no"]);

/** Whether an object is a typed pair that says SSN: one of its type keys holds a text that names one. */
function typedSsn(obj: Record<string, unknown>): boolean {
  return Object.entries(obj).some(([k, v]) => TYPE_KEYS.has(k) && typeof v === "string" && namesSsn(v));
}

/** `text` with every SSN shape in it as `[ssn:<token>]`. */
export function maskShapes(text: string, key: Buffer): string {
  return text.replace(SSN_SHAPE, (s) => `[ssn:${expectedSsnToken(s, key)}]`);
}

/** `record` as the store must hold it: each SSN key as `<key>_last4`/`<key>_token`, each shape in text tokenised in place. */
export function expectedMasked<T>(record: T, key: Buffer): T {
  return mask(record, key) as T;
}

function mask(value: unknown, key: Buffer): unknown {
  if (typeof value === "string") return maskShapes(value, key);
  if (Array.isArray(value)) return value.map((v) => mask(v, key));
  if (value === null || typeof value !== "object") return value;
  const obj = value as Record<string, unknown>;
  const typed = typedSsn(obj);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (holdsSsn(k, v) || (typed && VALUE_KEYS.has(k))) {
      out[`${k}_last4`] = maskOne(v, (t) => t.replace(/\D/g, "").slice(-4));
      out[`${k}_token`] = maskOne(v, (t) => expectedSsnToken(t, key));
    } else out[maskShapes(k, key)] = mask(v, key);
  }
  return out;
}

/** One SSN's stored form by `f`; a list of SSNs gives a list, element by element. */
function maskOne(v: unknown, f: (text: string) => string): unknown {
  if (Array.isArray(v)) return v.map((e) => maskOne(e, f));
  const text = typeof v === "number" && Number.isFinite(v) ? String(v) : v;
  return typeof text === "string" && text.length > 0 ? f(text) : null;
}

/**
 * The digits of every SSN a record holds by the contract (its SSN keys' values, typed pairs'
 * values, shapes in any text or key), each with the path where it was found: what must reach no
 * output in plain. A value with fewer than 9 digits is not kept (it could not be found as one).
 */
export function ssnsIn(record: unknown, path = ""): Map<string, string> {
  const out = new Map<string, string>();
  const add = (digits: string, where: string) => {
    if (digits.length >= 9 && !out.has(digits)) out.set(digits, where);
  };
  const whole = (v: unknown, where: string): void => {
    if (Array.isArray(v)) v.forEach((e, i) => whole(e, `${where}[${i}]`));
    else if (typeof v === "string" || (typeof v === "number" && Number.isFinite(v))) add(String(v).replace(/\D/g, ""), where);
  };
  const walk = (v: unknown, where: string): void => {
    if (typeof v === "string") for (const m of v.matchAll(SSN_SHAPE)) add(m[0].replace(/\D/g, ""), `${where} (in text)`);
    else if (Array.isArray(v)) v.forEach((e, i) => walk(e, `${where}[${i}]`));
    else if (v !== null && typeof v === "object") {
      const obj = v as Record<string, unknown>;
      const typed = typedSsn(obj);
      for (const [k, x] of Object.entries(obj)) {
        const at = where === "" ? k : `${where}.${k}`;
        for (const m of k.matchAll(SSN_SHAPE)) add(m[0].replace(/\D/g, ""), `${at} (in a key)`);
        if (holdsSsn(k, x) || (typed && VALUE_KEYS.has(k))) whole(x, at);
        else walk(x, at);
      }
    }
  };
  walk(record, path);
  return out;
}

/** Every SSN-like digit group in `text`: 3-2-4 with any separators above, and 9 digits standing alone; as digits, with where. */
export function ssnLikeIn(text: string): { digits: string; at: number; form: string }[] {
  const out: { digits: string; at: number; form: string }[] = [];
  for (const m of text.matchAll(new RegExp(`\\d{3}${SEP}\\d{2}${SEP}\\d{4}`, "g"))) {
    out.push({ digits: m[0].replace(/\D/g, ""), at: m.index, form: /^[\d-]+$/.test(m[0]) ? "dashed" : /^[\d ]+$/.test(m[0]) ? "spaced" : "NBSP/Unicode dash" });
  }
  for (const m of text.matchAll(/(?<![0-9A-Za-z])\d{9}(?![0-9A-Za-z])/g)) out.push({ digits: m[0], at: m.index, form: "digits only" });
  return out;
}
