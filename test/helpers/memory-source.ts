import { paginate, type Page } from "../../src/api/paginate.js";
import type { PageSource } from "../../src/extract/page-source.js";
import type { WalkedResource } from "../../src/store/schema/resources.js";

export interface MemoryData {
  designs: Record<string, unknown>[];
  groups: Record<string, unknown>[];
  members: Record<string, unknown>[];
  claims: Record<string, unknown>[];
}

export interface MemorySourceOptions {
  pageSize?: number;
  /** Throw on the Nth page fetch (1-based) and every later one: a persistent outage. */
  failFromFetch?: number;
  /** Reorder the whole list before paging (the service's order must not matter to the diff). */
  shuffle?: (items: unknown[]) => unknown[];
}

/**
 * An in-memory PageSource over plain data, filtered like the service (members by a coverage's
 * groupId, claims by groupId and service-date range), paged by id. For unit tests of the sync
 * engine; integration tests use the sandbox over HTTP instead.
 */
export function memorySource(data: () => MemoryData, opts: MemorySourceOptions = {}): PageSource & { fetches: number } {
  const state = { fetches: 0 };
  const pageSize = opts.pageSize ?? 3;
  const source = {
    get fetches() {
      return state.fetches;
    },
    pages(resource: WalkedResource, filters: Record<string, string | undefined> = {}, o: { startAfter?: string } = {}): AsyncGenerator<Page<unknown>> {
      const filtered = filterItems(resource, data()[resource], filters);
      const all = (opts.shuffle ? opts.shuffle([...filtered]) : filtered) as Record<string, unknown>[];
      return paginate(async (after) => {
        state.fetches++;
        if (opts.failFromFetch !== undefined && state.fetches >= opts.failFromFetch) throw new Error("simulated outage");
        // The cursor is the id of the last item of the previous page, as in the service.
        const start = after === undefined ? 0 : all.findIndex((x) => x.id === after) + 1;
        return { items: start <= 0 && after !== undefined ? [] : all.slice(start, start + pageSize) };
      }, o.startAfter !== undefined ? { startAfter: o.startAfter } : {});
    },
    memberText: async (id: string) => memberText(data(), id),
  };
  return source;
}

/** `GET /v1/members/{id}`: the member's JSON, or undefined (404). */
function memberText(data: MemoryData, id: string): string | undefined {
  const m = data.members.find((x) => x.id === id);
  return m === undefined ? undefined : JSON.stringify(m);
}

function filterItems(resource: WalkedResource, items: Record<string, unknown>[], f: Record<string, string | undefined>) {
  if (resource === "members" && f.groupId) {
    return items.filter((m) => ((m.coverages as Record<string, unknown>[] | undefined) ?? []).some((c) => c.groupId === f.groupId));
  }
  if (resource === "claims") {
    return items.filter(
      (c) =>
        (!f.groupId || c.groupId === f.groupId) &&
        (!f.memberId || c.memberId === f.memberId) &&
        (!f.serviceDateFrom || String(c.serviceDateFrom) >= f.serviceDateFrom) &&
        (!f.serviceDateTo || String(c.serviceDateFrom) <= f.serviceDateTo),
    );
  }
  return items;
}

export interface RawMemorySourceOptions {
  pageSize?: number;
  /** Replace the items of one page (after cursor `after`); undefined keeps them. */
  override?: (resource: WalkedResource, filters: Record<string, string | undefined>, after: string | undefined) => Record<string, unknown>[] | undefined;
  /** Called before each page fetch (1-based count): a test can act between fetches. */
  onFetch?: (n: number, resource: WalkedResource, filters: Record<string, string | undefined>) => void;
}

/**
 * An in-memory PageSource that also serves pages as bytes, as the client's `rawPages` does: a page
 * the snapshot knows by its bytes is recognised, so tests of the page cache need no HTTP server.
 */
export function rawMemorySource(data: () => MemoryData, opts: RawMemorySourceOptions = {}): PageSource & { fetches: number } {
  const state = { fetches: 0 };
  const pageSize = opts.pageSize ?? 2;
  const pageOf = (resource: WalkedResource, filters: Record<string, string | undefined>, after: string | undefined) => {
    state.fetches++;
    opts.onFetch?.(state.fetches, resource, filters);
    const all = filterItems(resource, data()[resource], filters);
    const start = after === undefined ? 0 : all.findIndex((x) => x.id === after) + 1;
    const items = opts.override?.(resource, filters, after) ?? (start <= 0 && after !== undefined ? [] : all.slice(start, start + pageSize));
    return { items, hasMore: items.length > 0 };
  };
  return {
    get fetches() {
      return state.fetches;
    },
    memberText: async (id) => memberText(data(), id),
    pages: (resource, filters = {}, o = {}) =>
      paginate(async (after) => pageOf(resource, filters, after), o.startAfter !== undefined ? { startAfter: o.startAfter } : {}),
    rawPages(resource, filters = {}, o = {}) {
      return paginate<string>(
        async (after) => {
          const { items, hasMore } = pageOf(resource, filters, after);
          const bytes = Buffer.from(JSON.stringify({ data: items, hasMore }));
          const fp = o.known?.fingerprint([bytes]);
          const known = fp === undefined ? undefined : await o.known!.lookup(after, fp);
          if (known) return { items: [], known, fp };
          return { items: items.map((i) => JSON.stringify(i)), hasMore, ...(fp !== undefined ? { fp } : {}) };
        },
        { ...(o.startAfter !== undefined ? { startAfter: o.startAfter } : {}), idOf: (t: string) => (JSON.parse(t) as { id?: string }).id },
      );
    },
  };
}
