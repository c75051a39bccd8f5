import { paginate, type Page } from "../../src/api/paginate.js";
import type { PageSource } from "../../src/extract/page-source.js";
import type { WalkedResource } from "../../src/store/resources.js";

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
  };
  return source;
}

function filterItems(resource: WalkedResource, items: Record<string, unknown>[], f: Record<string, string | undefined>) {
  if (resource === "members" && f.groupId) {
    return items.filter((m) => ((m.coverages as Record<string, unknown>[] | undefined) ?? []).some((c) => c.groupId === f.groupId));
  }
  if (resource === "claims") {
    return items.filter(
      (c) =>
        (!f.groupId || c.groupId === f.groupId) &&
        (!f.serviceDateFrom || String(c.serviceDateFrom) >= f.serviceDateFrom) &&
        (!f.serviceDateTo || String(c.serviceDateFrom) <= f.serviceDateTo),
    );
  }
  return items;
}
