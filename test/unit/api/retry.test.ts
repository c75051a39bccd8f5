import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY, parseRetryAfter, retryDelay } from "../../../src/api/retry.js";

describe("retryDelay (full jitter)", () => {
  it("10,000 sampled delays lie in [0, min(cap, base * 2^attempt)] and are not all equal", () => {
    const policy = { baseMs: 250, capMs: 10_000 };
    const samples: number[] = [];
    const outside: string[] = [];
    for (let i = 0; i < 10_000; i++) {
      const attempt = i % 10;
      const d = retryDelay(attempt, policy);
      const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** attempt);
      if (!(d >= 0 && d <= ceiling)) outside.push(`attempt ${attempt}: ${d}`);
      samples.push(d);
    }
    expect(samples).toHaveLength(10_000);
    expect(outside).toEqual([]);
    expect(new Set(samples).size).toBeGreaterThan(100);
    // Full jitter, not equal jitter: some delays of late attempts fall far below half the ceiling.
    expect(samples.some((d, i) => i % 10 === 9 && d < 1000)).toBe(true);
  });

  it("reaches both ends of the range with an extreme random source", () => {
    expect(retryDelay(3, DEFAULT_RETRY, () => 0)).toBe(0);
    expect(retryDelay(3, DEFAULT_RETRY, () => 0.999999)).toBe(1999);
    expect(retryDelay(30, DEFAULT_RETRY, () => 0.999999)).toBe(9999);
    expect(retryDelay(5000, DEFAULT_RETRY, () => 1)).toBe(10_000);
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2025-03-01T12:00:00Z");
  it("reads delay-seconds", () => {
    expect(parseRetryAfter("2", now)).toBe(2000);
    expect(parseRetryAfter(" 0 ", now)).toBe(0);
    expect(parseRetryAfter(["3", "9"], now)).toBe(3000);
  });
  it("reads an HTTP date, never negative", () => {
    expect(parseRetryAfter("Sat, 01 Mar 2025 12:00:05 GMT", now)).toBe(5000);
    expect(parseRetryAfter("Sat, 01 Mar 2025 11:00:00 GMT", now)).toBe(0);
  });
  it("ignores what is neither", () => {
    for (const bad of [undefined, null, "", "soon", "-1", "1.5"]) expect(parseRetryAfter(bad, now)).toBeUndefined();
  });
});
