/**
 * The byte budget publishFiles shares between its uploads (src/sinks/s3/publish-folder.ts): an
 * upload waits while another would pass the limit, one alone always goes (a file larger than the
 * whole budget is not stuck), and waiters go in order as bytes are given back.
 */
import { describe, expect, it } from "vitest";
import { byteBudget } from "../../../src/sinks/s3/publish-folder.js";

describe("byteBudget", () => {
  it("holds an upload that would pass the limit until bytes are given back; one alone goes whatever its size; first come, first served", async () => {
    const b = byteBudget(100);
    const started: string[] = [];
    const take = (name: string, n: number) => b.take(n).then(() => started.push(name));
    await take("huge", 500); // alone: goes although it is over the limit
    const p1 = take("a", 60);
    const p2 = take("b", 30);
    await Promise.resolve();
    expect(started).toEqual(["huge"]);
    b.give(500);
    await p1;
    await p2;
    expect(started).toEqual(["huge", "a", "b"]); // 60 + 30 <= 100: both
    const p3 = take("c", 20); // 90 + 20 > 100: waits
    const p4 = take("d", 5); // behind c, though it would fit
    await new Promise((r) => setTimeout(r, 0));
    expect(started).toEqual(["huge", "a", "b"]);
    b.give(60);
    await p3;
    await p4;
    expect(started).toEqual(["huge", "a", "b", "c", "d"]);
  });
});
