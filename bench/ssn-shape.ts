/**
 * The cost of the SSN shape look (issue 38) on the encoder's hot path, as ratios against a
 * baseline measured in the same run (these machines are shared and noisy):
 *
 *   npm run build && node dist/bench/ssn-shape.js [MEMBERS] [ROUNDS]
 *
 * Over the sandbox's member and claim JSON texts (MEMBERS default 30000, about 100k records with
 * their claims), per record, the median of ROUNDS (default 7):
 * - baseline: no shape check (a pass that reads each text's length);
 * - prefilter: `mayHoldSsnShape(raw)`, what the encoder asks once per record (one regex pass, the
 *   shapes under a key masked whole discounted, and a look for `\u` escapes);
 * - indexOf: the alternative it was chosen over, `indexOf` of each separator and `charCodeAt`
 *   reads around each hit (the separators outside ASCII only in a text that is not ASCII);
 * - regex: a plain regex test of the shape over the raw text;
 * - encode: the record's canonical JSON with the SSN masker, strings not looked at, for scale (what
 *   the check is added to); encode+look: with every string (value, element, key) looked at, what a
 *   flagged record costs.
 * Also the share of records each check flags (the prefilter discounts a shape under a key masked
 * whole, `"ssn":"123-45-6789"`, which every sandbox member has; the regex cannot).
 */
import { startSandbox } from "../src/sandbox/index.js";
import { mayHoldSsnShape } from "../src/pii/ssn-key.js";
import { canonicalJson } from "../src/store/walk/canonical.js";
import { ssnMasker } from "../src/store/pii/pii.js";

const members = Number(process.argv[2] ?? 30000);
const rounds = Number(process.argv[3] ?? 7);
const SHAPE = /(?<!\d)\d{3}[-\u0020\u00a0\u2010-\u2015\u2212]\d{2}[-\u0020\u00a0\u2010-\u2015\u2212]\d{4}(?!\d)/;

const sb = await startSandbox({ members, claimsPerMember: 3 });
const texts: string[] = [];
for (const m of sb.iterate("members")) texts.push(JSON.stringify(m));
const memberCount = texts.length;
for (const c of sb.iterate("claims")) texts.push(JSON.stringify(c));
await sb.close();
const items = texts.map((t) => JSON.parse(t) as unknown);
const masker = ssnMasker(Buffer.alloc(32, 1));

/** Median ns per record of `f` over every text, and how many it flagged. */
function time(f: (t: string, i: number) => boolean): { ns: number; flagged: number } {
  const runs: number[] = [];
  let flagged = 0;
  for (let r = 0; r < rounds; r++) {
    flagged = 0;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < texts.length; i++) if (f(texts[i]!, i)) flagged++;
    runs.push(Number(process.hrtime.bigint() - t0) / texts.length);
  }
  runs.sort((a, b) => a - b);
  return { ns: runs[Math.floor(runs.length / 2)]!, flagged };
}

let sink = 0;
const SEPARATORS = ["-", " ", "\u00a0", "\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2015", "\u2212"];
const isDigit = (c: number) => c >= 48 && c <= 57;
const isSep = (c: number) => c === 45 || c === 32 || c === 0xa0 || (c >= 0x2010 && c <= 0x2015) || c === 0x2212;
const shapeAt = (s: string, i: number) =>
  isDigit(s.charCodeAt(i + 1)) && isDigit(s.charCodeAt(i - 1)) && isDigit(s.charCodeAt(i + 2)) && isSep(s.charCodeAt(i + 3)) &&
  isDigit(s.charCodeAt(i - 2)) && isDigit(s.charCodeAt(i - 3)) && !isDigit(s.charCodeAt(i - 4)) && isDigit(s.charCodeAt(i + 4)) &&
  isDigit(s.charCodeAt(i + 5)) && isDigit(s.charCodeAt(i + 6)) && isDigit(s.charCodeAt(i + 7)) && !isDigit(s.charCodeAt(i + 8));
// A shape starting a string value right after `:"` is counted as the prefilter's named skip would (no key look: a lower bound).
const named = (s: string, i: number) => s.charCodeAt(i - 4) === 34 && s.charCodeAt(i - 5) === 58;
function indexOfPrefilter(t: string): boolean {
  if (t.indexOf("\\u") >= 0) return true;
  const seps = Buffer.byteLength(t, "utf8") === t.length ? 2 : SEPARATORS.length;
  for (let k = 0; k < seps; k++) {
    const sep = SEPARATORS[k]!;
    for (let i = t.indexOf(sep, 3); i >= 0; i = t.indexOf(sep, i + 1)) if (shapeAt(t, i) && !named(t, i)) return true;
  }
  return false;
}

const baseline = time((t) => (sink += t.length) < 0);
const prefilter = time((t) => mayHoldSsnShape(t));
const viaIndexOf = time((t) => indexOfPrefilter(t));
const regex = time((t) => SHAPE.test(t));
const encode = time((_t, i) => canonicalJson(items[i], { maskSsn: masker, shapes: false }).length < 0);
const encodeLook = time((_t, i) => canonicalJson(items[i], { maskSsn: masker, shapes: true }).length < 0);

const line = (name: string, r: { ns: number; flagged: number }, flags = true) =>
  `${name.padEnd(10)} ${r.ns.toFixed(0).padStart(6)} ns/record  ${(r.ns / baseline.ns).toFixed(1).padStart(6)}x baseline  ${((r.ns / encode.ns) * 100).toFixed(1).padStart(5)}% of encode` +
  (flags ? `  flags ${((r.flagged / texts.length) * 100).toFixed(1)}%` : "");
console.log(`${texts.length} records (${memberCount} members, ${texts.length - memberCount} claims), median of ${rounds} rounds`);
console.log(line("baseline", baseline, false));
console.log(line("prefilter", prefilter));
console.log(line("indexOf", viaIndexOf));
console.log(line("regex", regex));
console.log(line("encode", encode, false));
console.log(line("encode+look", encodeLook, false));
if (sink < 0) console.log(sink);
