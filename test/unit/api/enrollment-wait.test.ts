import { describe, expect, it } from "vitest";
import type { EnrollmentRequest } from "../../../schemas/enrollment-request.js";
import { pollEnrollmentRequest } from "../../../src/api/enrollment-wait.js";
import { defaultSleep } from "../../../src/api/sleep.js";
import { TimeoutError } from "../../../src/errors.js";

const req = (status: EnrollmentRequest["status"]): EnrollmentRequest => ({ id: "er1", status });

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

  it("throws a TimeoutError at the deadline, even while a poll hangs", async () => {
    const started = performance.now();
    const hang = (signal: AbortSignal) =>
      new Promise<EnrollmentRequest>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
    let first = true;
    const err = await pollEnrollmentRequest(
      async (signal) => (first ? ((first = false), req("pending")) : hang(signal)),
      "er1",
      { timeoutMs: 200, intervalMs: 10 },
      defaultSleep,
      Math.random,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as Error).message).toMatch(/er1 did not settle within 200 ms \(last status: pending\)/);
    expect(performance.now() - started).toBeLessThan(1200);
  });

  it("passes the caller's own abort through", async () => {
    const ctl = new AbortController();
    const reason = new Error("stop");
    const p = pollEnrollmentRequest(async () => req("pending"), "er1", { signal: ctl.signal, intervalMs: 1000 }, defaultSleep, Math.random);
    setTimeout(() => ctl.abort(reason), 20);
    await expect(p).rejects.toBe(reason);
  });
});
