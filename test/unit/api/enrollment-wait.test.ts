import { afterEach, describe, expect, it, vi } from "vitest";
import type { EnrollmentRequest } from "../../../schemas/enrollment-request.js";
import { pollEnrollmentRequest } from "../../../src/api/enrollment-wait.js";
import { defaultSleep } from "../../../src/api/sleep.js";
import { TimeoutError } from "../../../src/errors.js";

const req = (status: EnrollmentRequest["status"]): EnrollmentRequest => ({ id: "er1", status });

afterEach(() => {
  vi.useRealTimers();
});

describe("pollEnrollmentRequest", () => {
  it("polls with growing, jittered pauses until the request settles", async () => {
    const statuses = ["pending", "pending", "processing", "processing", "succeeded"] as const;
    let n = 0;
    const pauses: number[] = [];
    const out = await pollEnrollmentRequest(
      async () => req(statuses[n++]!),
      "er1",
      { intervalMs: 100, maxIntervalMs: 300 },
      async (ms) => void pauses.push(ms),
      () => 0.5,
    );
    expect(out.status).toBe("succeeded");
    expect(n).toBe(5);
    expect(pauses).toEqual([75, 150, 225, 225]);
  });

  it("resolves with a failed request: a failure is an answer", async () => {
    const out = await pollEnrollmentRequest(async () => req("failed"), "er1", {}, defaultSleep, Math.random);
    expect(out.status).toBe("failed");
  });

  it("throws a TimeoutError at the deadline, not before, even while a poll hangs", async () => {
    // A fake clock: the deadline is checked to the millisecond, however loaded the machine.
    vi.useFakeTimers();
    const hang = (signal: AbortSignal) =>
      new Promise<EnrollmentRequest>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
    let polls = 0;
    let settled = false;
    const waiting = pollEnrollmentRequest(
      async (signal) => (++polls === 1 ? req("pending") : hang(signal)),
      "er1",
      { timeoutMs: 200, intervalMs: 10 },
      async () => {}, // no pause: the second poll starts at once, and hangs
      Math.random,
    )
      .catch((e: unknown) => e)
      .finally(() => (settled = true));
    await vi.advanceTimersByTimeAsync(199);
    expect(polls).toBe(2); // the second poll hangs
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const err = await waiting;
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as Error).message).toMatch(/er1 did not settle within 200 ms \(last status: pending\)/);
  });

  it("passes the caller's own abort through", async () => {
    const ctl = new AbortController();
    const reason = new Error("stop");
    let polled!: () => void;
    const firstPoll = new Promise<void>((r) => (polled = r));
    const p = pollEnrollmentRequest(async () => (polled(), req("pending")), "er1", { signal: ctl.signal, intervalMs: 1000 }, defaultSleep, Math.random);
    // Aborted while it pauses between polls.
    await firstPoll;
    ctl.abort(reason);
    await expect(p).rejects.toBe(reason);
  });
});
