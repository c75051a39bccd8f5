/**
 * Where a version's data holds tokens of the PII key: a `<key>_token` beside its `<key>_last4`
 * (what masking writes for an SSN field, at any depth, a list element by element), and
 * `[ssn:<token>]` in free text (a string value, a list element or an object key). Finding them
 * (with the last4 that narrows the search) and writing them again under another key.
 */

const HEX64 = /^[0-9a-f]{64}$/;
const LAST4 = /^\d{0,4}$/;
const SHAPE = /\[ssn:([0-9a-f]{64})\]/g;
/** What an `[ssn:…]` whose digits are not known becomes, as a sink writes it in `--pii keep` mode. */
export const UNKNOWN_SHAPE = "[ssn]";

/** The tokens of a snapshot, as found. */
export class TokenCensus {
  /** Tokens beside a last4, by that last4. */
  readonly byLast4 = new Map<string, Set<string>>();
  /** Tokens met without a last4 (in free text, or beside none). */
  readonly bare = new Set<string>();
  /** Where each token was first met (resource and key path, never a value): for the refusal's message. */
  readonly where = new Map<string, string>();
  /** Every place a token was met: a token held twice counts twice. */
  places = 0;

  /** Note the tokens of a version's data of `resource`. */
  add(resource: string, data: unknown): void {
    this.walk(data, resource);
  }

  /** The distinct tokens whose last4 is not known anywhere. */
  unpaired(): string[] {
    const paired = new Set<string>();
    for (const set of this.byLast4.values()) for (const t of set) paired.add(t);
    return [...this.bare].filter((t) => !paired.has(t));
  }

  distinct(): number {
    const all = new Set(this.bare);
    for (const set of this.byLast4.values()) for (const t of set) all.add(t);
    return all.size;
  }

  private note(token: string, last4: unknown, path: string): void {
    this.places++;
    if (!this.where.has(token)) this.where.set(token, path);
    if (typeof last4 === "string" && LAST4.test(last4)) {
      const set = this.byLast4.get(last4);
      if (set) set.add(token);
      else this.byLast4.set(last4, new Set([token]));
    } else this.bare.add(token);
  }

  private pair(token: unknown, last4: unknown, path: string): void {
    if (Array.isArray(token)) token.forEach((t, i) => this.pair(t, Array.isArray(last4) ? last4[i] : undefined, `${path}[]`));
    else if (typeof token === "string" && HEX64.test(token)) this.note(token, last4, path);
  }

  private text(s: string, path: string): void {
    if (!s.includes("[ssn:")) return;
    for (const m of s.matchAll(SHAPE)) this.note(m[1]!, undefined, `${path} (text)`);
  }

  private walk(v: unknown, path: string): void {
    if (typeof v === "string") return this.text(v, path);
    if (Array.isArray(v)) return v.forEach((x) => this.walk(x, `${path}[]`));
    if (v === null || typeof v !== "object") return;
    const obj = v as Record<string, unknown>;
    for (const [k, x] of Object.entries(obj)) {
      this.text(k, `${path}.{key}`);
      const base = tokenBase(obj, k);
      if (base !== undefined) this.pair(x, obj[`${base}_last4`], `${path}.${k}`);
      else this.walk(x, `${path}.${k}`);
    }
  }
}

/** `ssn` for the key `ssn_token` of an object that also has `ssn_last4`; undefined for any other key. */
function tokenBase(obj: Record<string, unknown>, key: string): string | undefined {
  if (!key.endsWith("_token")) return undefined;
  const base = key.slice(0, -"_token".length);
  return Object.hasOwn(obj, `${base}_last4`) ? base : undefined;
}

/**
 * A copy of `v` with every token written again: `next` gives the new token of an old one, or null
 * for one whose digits were not found (a `_token` becomes null, an `[ssn:…]` becomes `[ssn]`).
 * A token `next` does not know is left as it is.
 */
export function retokenised(v: unknown, next: ReadonlyMap<string, string | null>): unknown {
  if (typeof v === "string") return retokeniseText(v, next);
  if (Array.isArray(v)) return v.map((x) => retokenised(x, next));
  if (v === null || typeof v !== "object") return v;
  const obj = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(obj)) out[retokeniseText(k, next)] = tokenBase(obj, k) !== undefined ? swapped(x, next) : retokenised(x, next);
  return out;
}

function swapped(token: unknown, next: ReadonlyMap<string, string | null>): unknown {
  if (Array.isArray(token)) return token.map((t) => swapped(t, next));
  if (typeof token !== "string" || !next.has(token)) return token;
  return next.get(token);
}

/** A text with each `[ssn:<old>]` written under the new key. */
export function retokeniseText(s: string, next: ReadonlyMap<string, string | null>): string {
  if (!s.includes("[ssn:")) return s;
  return s.replace(SHAPE, (whole, old: string) => {
    if (!next.has(old)) return whole;
    const t = next.get(old);
    return t === null || t === undefined ? UNKNOWN_SHAPE : `[ssn:${t}]`;
  });
}
