import { describe, expect, it } from "vitest";
import { createRateLimiter } from "../../../src/api/rate-limiter.js";

describe("createRateLimiter", () => {
  it("spaces concurrent callers 1000/rps apart, in call order", async () => {
    let clock = 1000;
    const waits: number[] = [];
    const limiter = createRateLimiter(4, async (ms) => void waits.push(ms), () => clock);
    await Promise.all([limiter(), limiter(), limiter(), limiter()]);
    expect(waits).toEqual([250, 500, 750]);
    clock += 2000; // idle time is not banked into a burst beyond one request
    waits.length = 0;
    await Promise.all([limiter(), limiter()]);
    expect(waits).toEqual([250]);
  });
  it("does not wait when unlimited", async () => {
    const waits: number[] = [];
    const limiter = createRateLimiter(0, async (ms) => void waits.push(ms));
    await Promise.all([limiter(), limiter(), limiter()]);
    expect(waits).toEqual([]);
  });
});
