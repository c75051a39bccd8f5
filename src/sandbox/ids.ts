/**
 * Identifiers of generated records are UUID-shaped and decodable: the record's index sits in the
 * last 12 hex digits (masked by the seed so it does not look like a counter) and a seed-keyed check
 * sits in the first 8. So `startAfter=<id>` resolves in O(1) without an index, and an id from
 * another seed or kind does not decode.
 */
import { hash32, type Rng } from "./prng.js";

const NIBBLE = "0123456789abcdef";
const BYTE = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** The low `width` (at most 8) hex digits of `n`, zero-padded: ids are built by the million, so no toString/padStart. */
function hex(n: number, width: number): string {
  const x = n >>> 0;
  let w = width;
  let s = "";
  if (w & 1) {
    w--;
    s = NIBBLE[(x >>> (w * 4)) & 15] as string;
  }
  while (w > 0) {
    w -= 2;
    s += BYTE[(x >>> (w * 4)) & 255] as string;
  }
  return s;
}

interface Masks {
  hi: number;
  lo: number;
  /** The constant middle of every id of this seed and kind. */
  middle: string;
}
const maskCache = new Map<string, Masks>();

function masks(seed: number, kind: number): Masks {
  const key = `${seed}:${kind}`;
  let m = maskCache.get(key);
  if (!m) {
    const t = hash32(seed, kind, 0x53);
    m = {
      hi: hash32(seed, kind, 0x51) & 0xffffff,
      lo: hash32(seed, kind, 0x52) & 0xffffff,
      middle: `${hex(t >>> 16, 4)}-4${hex(t >>> 4, 3)}-${hex(8 | (t & 3), 1)}${hex(t >>> 20, 3)}`,
    };
    maskCache.set(key, m);
  }
  return m;
}

/** The UUID of generated record `index` (0 ≤ index < 2^48) of `kind`. */
export function encodeId(seed: number, kind: number, index: number): string {
  const m = masks(seed, kind);
  const hi = Math.floor(index / 0x1000000) ^ m.hi;
  const lo = (index % 0x1000000) ^ m.lo;
  const check = hash32(seed, kind, index, 0x54);
  return `${hex(check, 8)}-${m.middle}-${hex(hi, 6)}${hex(lo, 6)}`;
}

/** The index encoded by {@link encodeId}, or undefined when `id` is not a generated id of this kind. */
export function decodeId(seed: number, kind: number, id: string): number | undefined {
  if (id.length !== 36 || id.charCodeAt(8) !== 45 || id.charCodeAt(23) !== 45) return undefined;
  const m = masks(seed, kind);
  const hi = parseInt(id.slice(24, 30), 16);
  const lo = parseInt(id.slice(30, 36), 16);
  if (!Number.isFinite(hi) || !Number.isFinite(lo)) return undefined;
  const index = (hi ^ m.hi) * 0x1000000 + (lo ^ m.lo);
  return encodeId(seed, kind, index) === id.toLowerCase() ? index : undefined;
}

/** A random v4 UUID drawn from a seeded stream (new records of writes and simulated days). */
export function randomUuid(rng: Rng): string {
  const a = rng.u32();
  const b = rng.u32();
  const c = rng.u32();
  const d = rng.u32();
  return `${hex(a, 8)}-${hex(b >>> 16, 4)}-4${hex(b, 3)}-${hex(8 | (c >>> 30), 1)}${hex(c >>> 16, 3)}-${hex(c, 4)}${hex(d, 8)}`;
}

/** A short opaque id with a prefix, for sponsors, groups, plans, designs, vendors, bundles. */
export function shortId(prefix: string, seed: number, kind: number, index: number): string {
  return `${prefix}_${hex(hash32(seed, kind, index, 0x77), 8)}${index.toString(36).padStart(3, "0")}`;
}
