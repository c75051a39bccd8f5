/**
 * Seeded, allocation-light randomness. Every generated record is a pure function of
 * (seed, kind, index): `rngFor(seed, kind, i)` gives the same stream on every call, so a record
 * can be rebuilt on demand instead of being kept in memory.
 */

/** murmur3's 32-bit finaliser: a cheap, well-spread bijection on uint32. */
export function mix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hash a few integers to one uint32. @example hash32(seed, 3, index) */
export function hash32(a: number, b = 0, c = 0, d = 0): number {
  let h = mix32((a ^ 0x9e3779b9) >>> 0);
  h = mix32((h ^ Math.imul(b + 0x7f4a7c15, 0x27d4eb2d)) >>> 0);
  h = mix32((h ^ Math.imul(c + 0x165667b1, 0x9e3779b1)) >>> 0);
  h = mix32((h ^ Math.imul(d + 0x3c6ef372, 0x85ebca77)) >>> 0);
  return h;
}

/** A uint32 from a seed given as number or string (FNV-1a for strings). */
export function seedToInt(seed: number | string): number {
  if (typeof seed === "number" && Number.isFinite(seed)) return mix32(Math.floor(seed) >>> 0);
  const s = String(seed);
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return mix32(h >>> 0);
}

/** mulberry32: small, fast, good enough for test data. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  /** An integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
  /** A uint32, for ids. */
  u32(): number {
    return Math.floor(this.next() * 4294967296) >>> 0;
  }
}

/** The record stream of one generated record. */
export function rngFor(seed: number, kind: number, index: number, salt = 0): Rng {
  return new Rng(hash32(seed, kind, index, salt));
}

/** Record kinds, so that streams of different kinds never coincide. */
export const Kind = {
  household: 1,
  member: 2,
  coverage: 3,
  claim: 4,
  catalog: 5,
  advance: 6,
  write: 7,
  key: 8,
  fault: 9,
  claimSlot: 10,
} as const;
