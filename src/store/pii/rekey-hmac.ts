/**
 * Finding the digits behind an `ssn_token`: HMAC-SHA256 is one way, but an SSN has few digits, so
 * the digits are found by trying them (the reason the snapshot's key is a secret). Re-keying a
 * snapshot needs them: every token is tried under the old key and written under the new one.
 *
 * The HMAC is computed here in plain JavaScript from the two SHA-256 states after the key's inner
 * and outer pad blocks (computed once per key): a try is then two SHA-256 block compressions and
 * no allocation. Measured on Node 20.20 (one core, 9 digits): 0.66 µs per try, against 2.1 µs for
 * two one-shot `crypto.hash` calls over the padded key, 2.9 µs for `createHmac` and 4.3 µs for
 * `Hash.copy()` of the padded states (each call into native code costs more than the hash).
 */
import { createHash } from "node:crypto";

const K = Int32Array.from(
  [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74,
    0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d,
    0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e,
    0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
    0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ].map((x) => x | 0),
);
const IV = Int32Array.from([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19].map((x) => x | 0));

/** The most digits a token is looked for with: an SSN has nine. */
export const MAX_DIGITS = 9;

/** Tries for one last4 (lengths 4 to 9): 10^0 + ... + 10^5. */
export const TRIES_PER_LAST4 = 111_111;

/** The tokens looked for, by the first 32 bits of their HMAC (a try's result is turned into hex only on a match). */
export type Targets = Map<number, string[]>;

export function targetsOf(tokens: Iterable<string>): Targets {
  const out: Targets = new Map();
  for (const t of tokens) {
    const first = parseInt(t.slice(0, 8), 16) | 0;
    const list = out.get(first);
    if (list) list.push(t);
    else out.set(first, [t]);
  }
  return out;
}

/** An HMAC-SHA256 key made ready for many tries. */
export class HmacSearcher {
  private readonly w = new Int32Array(64);
  private readonly inner = new Int32Array(8);
  private readonly outer = new Int32Array(8);
  private readonly innerStart: Int32Array;
  private readonly outerStart: Int32Array;
  /** Tries made, for the measure of µs per try. */
  tries = 0;

  constructor(key: Buffer) {
    const block = Buffer.alloc(64);
    (key.length > 64 ? createHash("sha256").update(key).digest() : key).copy(block);
    this.innerStart = this.midstate(block.map((b) => b ^ 0x36));
    this.outerStart = this.midstate(block.map((b) => b ^ 0x5c));
  }

  /** The token of `digits` (at most 55 characters), as `ssnToken` writes it. */
  token(digits: string): string {
    const m = Buffer.alloc(64);
    m.write(digits, "latin1");
    m[digits.length] = 0x80;
    m.writeUInt32BE((64 + digits.length) * 8, 60);
    for (let i = 0; i < 16; i++) this.w[i] = m.readInt32BE(i * 4);
    this.finish();
    return this.hex();
  }

  /**
   * Try every `unknown`-digit prefix (from `from` to `to`, exclusive) before `suffix`; each token of
   * `targets` found goes into `found` with its digits. Returns how many were found.
   */
  search(suffix: string, unknown: number, targets: Targets, found: Map<string, string>, from = 0, to = 10 ** unknown): number {
    const n = unknown + suffix.length;
    const bytes = new Uint8Array(64);
    for (let i = 0; i < suffix.length; i++) bytes[unknown + i] = suffix.charCodeAt(i);
    bytes[n] = 0x80;
    const word = (i: number) => (bytes[4 * i]! << 24) | (bytes[4 * i + 1]! << 16) | (bytes[4 * i + 2]! << 8) | bytes[4 * i + 3]!;
    // The block's words the prefix does not touch are the same for every try.
    const base = new Int32Array(16);
    for (let i = 0; i < 15; i++) base[i] = word(i);
    base[15] = (64 + n) * 8;
    const changing = Math.ceil(unknown / 4);
    const w = this.w;
    let hits = 0;
    for (let p = from; p < to; p++) {
      for (let i = unknown - 1, q = p; i >= 0; i--, q = (q / 10) | 0) bytes[i] = 48 + (q % 10);
      for (let i = 0, j = 0; i < changing; i++, j += 4) w[i] = (bytes[j]! << 24) | (bytes[j + 1]! << 16) | (bytes[j + 2]! << 8) | bytes[j + 3]!;
      for (let i = changing; i < 16; i++) w[i] = base[i]!;
      this.finish();
      const list = targets.get(this.outer[0]!);
      if (list === undefined) continue;
      const hex = this.hex();
      if (!list.includes(hex) || found.has(hex)) continue;
      found.set(hex, String.fromCharCode(...bytes.subarray(0, n)));
      hits++;
    }
    this.tries += to - from;
    return hits;
  }

  /** The inner hash of the message block in `w`, then the outer hash of it, into `outer`. */
  private finish(): void {
    compress(this.w, this.innerStart, this.inner);
    const w = this.w;
    for (let i = 0; i < 8; i++) w[i] = this.inner[i]!;
    w[8] = 0x80000000 | 0;
    for (let i = 9; i < 15; i++) w[i] = 0;
    w[15] = (64 + 32) * 8;
    compress(w, this.outerStart, this.outer);
  }

  private hex(): string {
    let s = "";
    for (let i = 0; i < 8; i++) s += (this.outer[i]! >>> 0).toString(16).padStart(8, "0");
    return s;
  }

  private midstate(block: Uint8Array): Int32Array {
    const view = new DataView(block.buffer, block.byteOffset, 64);
    for (let i = 0; i < 16; i++) this.w[i] = view.getInt32(i * 4);
    const out = new Int32Array(8);
    compress(this.w, IV, out);
    return out;
  }
}

/** One SHA-256 block compression of `w[0..15]` from state `st` into `out` (`w` is expanded in place). */
function compress(w: Int32Array, st: Int32Array, out: Int32Array): void {
  for (let i = 16; i < 64; i++) {
    const a = w[i - 15]!;
    const b = w[i - 2]!;
    const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
    const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
    w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
  }
  let a = st[0]!, b = st[1]!, c = st[2]!, d = st[3]!, e = st[4]!, f = st[5]!, g = st[6]!, h = st[7]!;
  for (let i = 0; i < 64; i++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + s1 + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  out[0] = (st[0]! + a) | 0;
  out[1] = (st[1]! + b) | 0;
  out[2] = (st[2]! + c) | 0;
  out[3] = (st[3]! + d) | 0;
  out[4] = (st[4]! + e) | 0;
  out[5] = (st[5]! + f) | 0;
  out[6] = (st[6]! + g) | 0;
  out[7] = (st[7]! + h) | 0;
}

/**
 * Look for every token of `tokens` whose digits end in `last4` (its `_last4` beside it): nine
 * digits first (an SSN), then fewer (4 to 8: a value of n digits has n-4 unknown). A last4 of
 * fewer than 4 digits is all the digits there were. Returns the digits found, by token.
 */
export function searchLast4(searcher: HmacSearcher, last4: string, tokens: readonly string[], found: Map<string, string> = new Map()): Map<string, string> {
  const targets = targetsOf(tokens);
  let left = tokens.filter((t) => !found.has(t)).length;
  if (last4.length < 4) {
    searcher.search(last4, 0, targets, found);
    return found;
  }
  for (let unknown = MAX_DIGITS - 4; unknown >= 0 && left > 0; unknown--) left -= searcher.search(last4, unknown, targets, found);
  return found;
}
