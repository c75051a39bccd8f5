import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PaginationError } from "../../../src/errors.js";
import { paginate, type Page, type PageResult } from "../../../src/api/paginate.js";

type Item = { id?: unknown; n?: number };

/** A fake list endpoint over `items`, answering pages of the given sizes (the last size repeats). */
function listServer(items: Item[], sizes: number[], opts: { hasMoreOnLast?: boolean } = {}) {
  const calls: (string | undefined)[] = [];
  const fetchPage = async (startAfter: string | undefined): Promise<PageResult<Item>> => {
    calls.push(startAfter);
    const from = startAfter === undefined ? 0 : items.findIndex((i) => i.id === startAfter) + 1;
    const size = sizes[Math.min(calls.length - 1, sizes.length - 1)] ?? 1;
    const page = items.slice(from, from + size);
    const end = from + size >= items.length;
    return opts.hasMoreOnLast && end ? { items: page, hasMore: false } : { items: page };
  };
  return { fetchPage, calls };
}

async function collect<T>(gen: AsyncGenerator<Page<T>>): Promise<Page<T>[]> {
  const out: Page<T>[] = [];
  for await (const p of gen) out.push(p);
  return out;
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `m${String(i).padStart(4, "0")}`, n: i }));

describe("paginate", () => {
  it("walks several pages and stops at an empty page, which is not yielded", async () => {
    const { fetchPage, calls } = listServer(ids(7), [3]);
    const pages = await collect(paginate(fetchPage));
    expect(pages.map((p) => p.items.length)).toEqual([3, 3, 1]);
    expect(calls).toEqual([undefined, "m0002", "m0005", "m0006"]);
    expect(pages.map((p) => [p.index, p.startAfter, p.next])).toEqual([
      [0, undefined, "m0002"],
      [1, "m0002", "m0005"],
      [2, "m0005", "m0006"],
    ]);
  });

  it("stops at hasMore: false without asking for another page, and that page's next is undefined", async () => {
    const { fetchPage, calls } = listServer(ids(5), [2], { hasMoreOnLast: true });
    const pages = await collect(paginate(fetchPage));
    expect(pages.flatMap((p) => p.items.map((i) => i.id))).toEqual(ids(5).map((i) => i.id));
    expect(calls).toHaveLength(3);
    expect(pages.at(-1)?.next).toBeUndefined();
  });

  it("does not take a short page for the end", async () => {
    // 50, then 10 (short), then 50: a client that stops at the short page loses 40 items.
    const { fetchPage } = listServer(ids(100), [50, 10, 50]);
    const pages = await collect(paginate(fetchPage));
    expect(pages.flatMap((p) => p.items)).toHaveLength(100);
    expect(pages.map((p) => p.items.length)).toEqual([50, 10, 40]);
  });

  it("resumes after a given cursor", async () => {
    const { fetchPage, calls } = listServer(ids(5), [2]);
    const pages = await collect(paginate(fetchPage, { startAfter: "m0001" }));
    expect(calls[0]).toBe("m0001");
    expect(pages.flatMap((p) => p.items.map((i) => i.n))).toEqual([2, 3, 4]);
  });

  it("skips items without an id for the cursor but yields them, and advances by the last item that has one", async () => {
    const answers: PageResult<Item>[] = [
      { items: [{ id: "a" }, { id: "b" }, { n: 1 }, { id: 42 }] },
      { items: [{ id: "c" }] },
      { items: [] },
    ];
    const calls: (string | undefined)[] = [];
    const pages = await collect(
      paginate(async (after) => {
        calls.push(after);
        return answers[calls.length - 1]!;
      }),
    );
    expect(calls).toEqual([undefined, "b", "c"]);
    expect(pages[0]?.items).toHaveLength(4);
  });

  it("fails on a non-empty page where no item has an id", async () => {
    const gen = paginate(async () => ({ items: [{ n: 1 }, { id: "" }] as Item[] }));
    await expect(collect(gen)).rejects.toThrow(/none has an id: the cursor cannot advance/);
  });

  it("fails fast, with a clear error, when the server answers the same page forever", async () => {
    let calls = 0;
    const gen = paginate(async () => {
      calls++;
      return { items: [{ id: "a" }, { id: "b" }] };
    });
    const err = await collect(gen).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaginationError);
    expect((err as PaginationError).code).toBe("PAGINATION");
    expect((err as Error).message).toMatch(/repeats id "a" already seen.*not advancing/);
    expect(calls).toBe(2);
  });

  it("fails when a page ends with the cursor it was asked with", async () => {
    const gen = paginate(async (after) => ({ items: [{ id: "x" }, { id: after ?? "y" }] }), { startAfter: "z" });
    await expect(collect(gen)).rejects.toThrow(/ends with the cursor it was asked with \("z"\)/);
  });

  it("fails when a later page repeats an id from an earlier page, even with a moving cursor", async () => {
    const answers = [{ items: [{ id: "a" }, { id: "b" }] }, { items: [{ id: "c" }, { id: "a" }, { id: "d" }] }];
    let i = 0;
    const gen = paginate(async () => answers[i++] ?? { items: [] });
    await expect(collect(gen)).rejects.toThrow(PaginationError);
  });

  it("uses a custom idOf", async () => {
    const answers: PageResult<{ memberId: string }>[] = [{ items: [{ memberId: "p" }] }, { items: [] }];
    const calls: (string | undefined)[] = [];
    await collect(
      paginate(
        async (after) => {
          calls.push(after);
          return answers[calls.length - 1]!;
        },
        { idOf: (m) => m.memberId },
      ),
    );
    expect(calls).toEqual([undefined, "p"]);
  });

  describe("read ahead", () => {
    it("asks for the next page before the caller is done with this one, and only with readAhead", async () => {
      for (const readAhead of [true, false]) {
        const { fetchPage, calls } = listServer(ids(7), [3], { hasMoreOnLast: true });
        const askedWhileHolding: number[] = [];
        for await (const page of paginate(fetchPage, { readAhead })) {
          // The caller works on the page: let every pending promise settle meanwhile (the fetches
          // are promise chains; a macrotask runs after all of them).
          await new Promise((r) => setImmediate(r));
          askedWhileHolding.push(calls.length - (page.index + 1));
        }
        // With read ahead, the next page (when there is one) was asked for while the caller held this one.
        expect(askedWhileHolding).toEqual(readAhead ? [1, 1, 0] : [0, 0, 0]);
        // Never a request past the end: the last page said hasMore: false.
        expect(calls).toEqual([undefined, "m0002", "m0005"]);
      }
    });

    it("reads ahead after a known page too, with the cursor the caller gave for it", async () => {
      const calls: (string | undefined)[] = [];
      const answers: PageResult<Item>[] = [{ items: [], known: { next: "k1" } }, { items: [{ id: "x" }], hasMore: false }];
      const pages: Page<Item>[] = [];
      for await (const page of paginate(
        async (after) => {
          calls.push(after);
          return answers[calls.length - 1]!;
        },
        { readAhead: true },
      )) {
        expect(calls.length).toBe(page.index + (page.next === undefined ? 1 : 2));
        pages.push(page);
      }
      expect(calls).toEqual([undefined, "k1"]);
      expect(pages.map((p) => [p.known ?? false, p.next])).toEqual([
        [true, "k1"],
        [false, undefined],
      ]);
    });

    it("gives a failure of the page read ahead to the caller at that page, after the pages before it", async () => {
      let n = 0;
      const gen = paginate<Item>(
        async () => {
          n++;
          if (n === 2) throw new Error("page 2 failed");
          return { items: [{ id: `i${n}` }] };
        },
        { readAhead: true },
      );
      const first = await gen.next();
      expect(first.value).toMatchObject({ index: 0, items: [{ id: "i1" }] });
      await expect(gen.next()).rejects.toThrow("page 2 failed");
    });

    it("leaves no unhandled rejection when the caller stops before the page read ahead fails", async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (e: unknown) => unhandled.push(e);
      process.on("unhandledRejection", onUnhandled);
      try {
        let n = 0;
        // The page read ahead fails when the test says so: after the caller has stopped.
        let fail!: (e: Error) => void;
        for await (const page of paginate<Item>(
          async () => {
            n++;
            if (n === 2) return new Promise<never>((_, reject) => (fail = reject));
            return { items: [{ id: `i${n}` }] };
          },
          { readAhead: true },
        )) {
          expect(page.index).toBe(0);
          break;
        }
        expect(n).toBe(2);
        fail(new Error("never awaited"));
        // Node reports unhandled rejections once the microtasks are done, before the next macrotask.
        await new Promise((r) => setImmediate(r));
        await new Promise((r) => setImmediate(r));
        expect(unhandled).toEqual([]);
      } finally {
        process.off("unhandledRejection", onUnhandled);
      }
    });
  });

  it("a cycle that runs through pages the caller knows by their bytes ends with a PaginationError", async () => {
    // start -> [a, b] -> (known) next d -> (known) next b -> (known) next d -> ... without the rule.
    let fetches = 0;
    const fetchPage = async (after: string | undefined): Promise<PageResult<{ id: string }>> => {
      if (++fetches > 50) throw new Error("runaway: the cycle was not detected");
      if (after === undefined) return { items: [{ id: "a" }, { id: "b" }] };
      return { items: [], known: { next: after === "b" ? "d" : "b" } };
    };
    await expect(collect(paginate(fetchPage))).rejects.toThrow(PaginationError);
    expect(fetches).toBeLessThan(5);
  });

  it("property: any split into pages yields every item exactly once, in order, with or without read ahead", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 60 }),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        fc.boolean(),
        async (n, sizes, hasMoreOnLast, readAhead) => {
          const items = ids(n);
          const { fetchPage } = listServer(items, sizes, { hasMoreOnLast });
          const pages = await collect(paginate(fetchPage, { readAhead }));
          expect(pages.flatMap((p) => p.items)).toEqual(items);
          expect(pages.every((p) => p.items.length > 0)).toBe(true);
          if (pages.length) expect(pages.at(-1)?.next === undefined).toBe(hasMoreOnLast);
        },
      ),
      { numRuns: 200 },
    );
  });
});
