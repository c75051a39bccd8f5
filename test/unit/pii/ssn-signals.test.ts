/**
 * The three signals of the one SSN rule (issue 38's contract), case by case, through all four
 * walkers that ask it: the canonical writer with a masker (what SQLite stores), maskPii (the
 * quarantine's excerpts, the census result file), the sinks' strip (a `--pii keep` snapshot's
 * records on their way out) and maskSsnText (messages and logs). Every expected value is written
 * out here, the tokens worked out with node:crypto, so the walkers cannot drift apart unseen. Each
 * walker applied to its own output changes nothing: the scrub of an old snapshot relies on it.
 */
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { maskSsnText } from "../../../src/pii/ssn-key.js";
import { withoutPlainSsn } from "../../../src/sinks/plain-ssn.js";
import { canonicalJson } from "../../../src/store/walk/canonical.js";
import { maskPii, ssnMasker } from "../../../src/store/pii/pii.js";

const KEY = Buffer.alloc(32, 9);
const tok = (digits: string) => createHmac("sha256", KEY).update(digits).digest("hex");
const SSN = "123-45-6789";
const T = tok("123456789");
/** A token as masking writes it: 64 hex characters, here with no run of digits in it. */
const HEX = "9f".repeat(32);

const walk = {
  canonical: (r: unknown) => JSON.parse(canonicalJson(r, { maskSsn: ssnMasker(KEY) })) as unknown,
  maskPii: (r: unknown) => maskPii(r, KEY),
  strip: (r: unknown) => withoutPlainSsn(r),
  text: (r: unknown) => maskSsnText(JSON.stringify(r)),
};

/** A masked key: the stored form `{<k>_last4, <k>_token}` of `ssn`, and nothing under `k` in a sink. */
interface Masked {
  readonly input: Record<string, unknown>;
  /** What canonical and maskPii give. */
  readonly stored: Record<string, unknown>;
  /** What a sink gives under keep. */
  readonly sink: Record<string, unknown>;
  /** The plain forms that no walker may leave. */
  readonly plain: readonly string[];
}

const named = (key: string, value: unknown = SSN, digits = "123456789"): Masked => ({
  input: { id: "r1", [key]: value, city: "Austin" },
  stored: { id: "r1", [`${key}_last4`]: digits.slice(-4), [`${key}_token`]: tok(digits), city: "Austin" },
  sink: { id: "r1", city: "Austin" },
  plain: [String(value)],
});

// Rule 1: keys whose words name a social security, taxpayer or national identifier.
const NAMES = [
  "ssn", "SSN", "ssnNumber", "SS#", "SS #", "ss#", "socSecNum", "soc_sec_no", "SOC-SEC", "socialSecurityNumber", "social_security",
  "SOCIALSECURITYNUMBER", "socialsecurityno", "ss_no", "SSNo", "ss_nbr", "ssnumber", "ssno", "ssn3x", "tin", "TIN", "tins", "TINs",
  "itin", "ITIN", "tinNumber", "payee_tin", "taxpayerId", "taxpayer_identification_number", "Taxpayers", "taxId", "tax_id",
  "TaxID", "TAXID", "taxIdentifier", "taxIdentificationNumber", "tax_number", "taxNo", "taxNum", "nationalId", "national_identifier",
  "NationalIdentificationNumber", "nationalNumber", "national_no", "nationalNum", "nationalid", "NATIONAL_ID", "dependent-TIN",
  "primary ssn", "spouse.taxId",
];
const NOT_NAMES = [
  "settings", "destination", "tint", "itinerary", "taxAmount", "salesTax", "taxonomyCode", "nationality", "nationalProviderId",
  "internationalId", "ein", "fein", "npi", "zip", "claimNumber", "routingNumber", "id", "lesson", "classname", "session", "assnId",
  "password", "socialMedia", "security", "ssId", "passNo", "tax", "national", "social", "taxRate", "nationalIdentity", "continuation",
  "accessToken", "last4", "token", "value", "number", "type",
];

const MASKED: [string, Masked][] = [
  ...NAMES.map((k): [string, Masked] => [`name ${k}`, named(k)]),
  ["name, bare digits", named("taxpayerId", "123456789")],
  ["name, a number", named("TIN", 123456789)],
  ["name, a list", { input: { TINs: [SSN, "987-65-4321"] }, stored: { TINs_last4: ["6789", "4321"], TINs_token: [T, tok("987654321")] }, sink: {}, plain: [SSN, "987-65-4321"] }],
  ["name at depth", { input: { a: { b: [{ nationalId: SSN }] } }, stored: { a: { b: [{ nationalId_last4: "6789", nationalId_token: T }] } }, sink: { a: { b: [{}] } }, plain: [SSN] }],
  // Rule 1's values: masking's own keys, holding more than they should.
  ["last4 holding 9 digits", named("ssnLast4", "123456789")],
  ["last4 holding a dashed SSN", named("taxId_last4", SSN)],
  ["last 4 holding 5 digits", named("ssn_last_4", "12345", "12345")],
  ["last4 holding a number", named("SSN_last4", 123456789)],
  ["last4, one element of a list", { input: { ssnLast4: ["6789", "123456789"] }, stored: { ssnLast4_last4: ["6789", "6789"], ssnLast4_token: [tok("6789"), T] }, sink: {}, plain: ["123456789"] }],
  ["token holding an SSN", named("ssn_token", "123456789")],
  ["token holding a dashed SSN", named("dependentSsn_token", SSN)],
  ["token holding a number", named("ssn_token", 123456789)],
  ["token holding short hex with a digit", named("ssn_token", "abc1", "1")],
  // Rule 2: typed pairs.
  [
    "type/value in a list",
    {
      input: { governmentIds: [{ type: "SSN", value: SSN }, { type: "passport", value: "X1" }] },
      stored: { governmentIds: [{ type: "SSN", value_last4: "6789", value_token: T }, { type: "passport", value: "X1" }] },
      sink: { governmentIds: [{ type: "SSN" }, { type: "passport", value: "X1" }] },
      plain: [SSN],
    },
  ],
  ["kind/number", { input: { ids: { kind: "TIN", number: "123456789" } }, stored: { ids: { kind: "TIN", number_last4: "6789", number_token: T } }, sink: { ids: { kind: "TIN" } }, plain: ["123456789"] }],
  [
    "name/identifier",
    {
      input: { x: { name: "Social Security Number", identifier: "123 45 6789" } },
      stored: { x: { name: "Social Security Number", identifier_last4: "6789", identifier_token: T } },
      sink: { x: { name: "Social Security Number" } },
      plain: ["123 45 6789"],
    },
  ],
  ["idType/idNumber, numeric", { input: { x: { idType: "national_id", idNumber: 123456789 } }, stored: { x: { idType: "national_id", idNumber_last4: "6789", idNumber_token: T } }, sink: { x: { idType: "national_id" } }, plain: ["123456789"] }],
  ["id_type/id_number, SS#", { input: { x: { id_type: "SS#", id_number: SSN } }, stored: { x: { id_type: "SS#", id_number_last4: "6789", id_number_token: T } }, sink: { x: { id_type: "SS#" } }, plain: [SSN] }],
  ["identifierType/num, taxId", { input: { x: { identifierType: "taxId", num: "123456789" } }, stored: { x: { identifierType: "taxId", num_last4: "6789", num_token: T } }, sink: { x: { identifierType: "taxId" } }, plain: ["123456789"] }],
  ["scheme/no", { input: { x: { scheme: "ssn", no: "123456789" } }, stored: { x: { scheme: "ssn", no_last4: "6789", no_token: T } }, sink: { x: { scheme: "ssn" } }, plain: ["123456789"] }],
  [
    "two value keys",
    {
      input: { x: { type: "SSN", value: SSN, number: "987654321" } },
      stored: { x: { type: "SSN", value_last4: "6789", value_token: T, number_last4: "4321", number_token: tok("987654321") } },
      sink: { x: { type: "SSN" } },
      plain: [SSN, "987654321"],
    },
  ],
  // Rule 3: shapes in free text.
  ...(
    [
      ["dashed", SSN],
      ["spaced", "123 45 6789"],
      ["NBSP", "123\u00a045\u00a06789"],
      ["en dash", "123\u201345\u20136789"],
      ["U+2212", "123\u221245\u22126789"],
      ["U+2010 and U+2015", "123\u201045\u20156789"],
      ["dash then space", "123-45 6789"],
    ] as const
  ).map(([label, shape]): [string, Masked] => [
    `shape ${label} in a sentence`,
    { input: { notes: `call re ${shape}, today` }, stored: { notes: `call re [ssn:${T}], today` }, sink: { notes: "call re [ssn], today" }, plain: [shape] },
  ]),
  ["shape, whole value", { input: { memo: SSN }, stored: { memo: `[ssn:${T}]` }, sink: { memo: "[ssn]" }, plain: [SSN] }],
  ["two shapes", { input: { n: `${SSN}/987 65 4321` }, stored: { n: `[ssn:${T}]/[ssn:${tok("987654321")}]` }, sink: { n: "[ssn]/[ssn]" }, plain: [SSN, "987 65 4321"] }],
  ["shape in a list element", { input: { tags: ["a", `x ${SSN}`] }, stored: { tags: ["a", `x [ssn:${T}]`] }, sink: { tags: ["a", "x [ssn]"] }, plain: [SSN] }],
  ["shape in an object key", { input: { byPerson: { [SSN]: "Ana" } }, stored: { byPerson: { [`[ssn:${T}]`]: "Ana" } }, sink: { byPerson: { "[ssn]": "Ana" } }, plain: [SSN] }],
  ["shape at depth", { input: { processing: { denialReason: `member 123 45 6789 not found` } }, stored: { processing: { denialReason: `member [ssn:${T}] not found` } }, sink: { processing: { denialReason: "member [ssn] not found" } }, plain: ["123 45 6789"] }],
];

/** Left alone by the three record walkers; `textMasks`: maskSsnText masks a bare 9-digit run, as ever. */
const LEFT: [string, Record<string, unknown>, boolean?][] = [
  ...NOT_NAMES.map((k): [string, Record<string, unknown>] => [`not a name: ${k}`, { [k]: "A-1" }]),
  ["last4 holding 4 digits", { ssnLast4: "6789", taxId_last4: "xxx-xx-6789", ssn_last4: 6789 }],
  ["last4 holding nothing", { ssn_last4: null }],
  ["token holding 64 hex", { ssn_token: HEX, taxId_token: HEX.toUpperCase() }],
  ["token holding no digit", { ssn_token: "redacted" }],
  ["token of a list", { ssn_token: [HEX, null] }],
  ["type not an SSN", { x: { type: "EIN", value: "12-3456789" } }],
  ["type a licence", { x: { type: "driversLicense", number: "D123" } }],
  ["name a plan", { x: { name: "Gold PPO", number: 3 } }],
  ["type with no value", { x: { type: "SSN", label: "primary" } }],
  ["a value with no type", { x: { value: "123456789" } }, true],
  ["a date", { d: "2024-01-15", t: "2024-01-15T10:20:30.000Z" }],
  ["a phone", { phone: "+12015551234", other: "555-123-4567" }],
  ["an EIN", { ein: "12-3456789" }],
  // Messages mask any nine digits in any grouping, as they always did: a zip+4 too.
  ["a zip+4", { zip: "62701-1234" }, true],
  ["a zip+4 undashed", { zip: "627011234" }, true],
  ["a claim number", { claimNumber: "123456789" }, true],
  ["a UUID", { u: "123e4567-e89b-12d3-a456-426614174000" }],
  ["a longer run", { a: "1234-56-7890", b: "123-45-67890", c: "0123 45 6789" }],
  ["other separators", { a: "123_45_6789", b: "123.45.6789", c: "123--45-6789", d: "123\t45\t6789" }],
];

const hasPlain = (text: string, plain: readonly string[]) => plain.filter((p) => text.includes(p));

describe("an SSN by name, by type or by shape", () => {
  it.each(MASKED)("%s: stored tokenised, dropped from sinks, masked in messages", (_label, c) => {
    expect(walk.canonical(c.input)).toEqual(c.stored);
    expect(walk.maskPii(c.input)).toEqual(c.stored);
    expect(walk.strip(c.input)).toEqual(c.sink);
    const text = walk.text(c.input);
    expect(hasPlain(text, c.plain), text).toEqual([]);
    expect(text).toContain("[ssn]");
    for (const out of [JSON.stringify(walk.canonical(c.input)), JSON.stringify(walk.maskPii(c.input)), JSON.stringify(walk.strip(c.input))]) {
      expect(hasPlain(out, c.plain), out).toEqual([]);
    }
  });

  it.each(LEFT)("%s: left as it is", (_label, input, textMasks) => {
    expect(walk.canonical(input)).toEqual(input);
    expect(walk.maskPii(input)).toEqual(input);
    expect(walk.strip(input)).toEqual(input);
    const json = JSON.stringify(input);
    if (textMasks) expect(walk.text(input)).toContain("[ssn]");
    else expect(walk.text(input)).toBe(json);
  });

  it.each([...MASKED.map(([l, c]) => [l, c.input] as const), ...LEFT.map(([l, i]) => [l, i] as const)])("%s: each walker leaves its own output as it is", (_label, input) => {
    const stored = canonicalJson(input, { maskSsn: ssnMasker(KEY) });
    expect(canonicalJson(JSON.parse(stored), { maskSsn: ssnMasker(KEY) })).toBe(stored);
    const excerpt = walk.maskPii(input);
    expect(walk.maskPii(excerpt)).toEqual(excerpt);
    const sink = walk.strip(input);
    expect(walk.strip(sink)).toEqual(sink);
    const message = walk.text(input);
    expect(maskSsnText(message)).toBe(message);
  });
});
