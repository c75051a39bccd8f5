import { PaginationError } from "../errors.js";

/** What one fetch of a page returns: its items and, when the server says so, whether more follow. */
export interface PageResult<T> {
  items: T[];
  hasMore?: boolean | undefined;
  /** Each item's JSON text as the server sent it, when the caller could tell (same order as items). */
  raw?: string[] | undefined;
  /**
   * The page is one the caller already knows (its text is the same as last time): its items are
   * not given, and `next` is the cursor after it (undefined: it was the last page).
   */
  known?: { readonly next: string | undefined } | undefined;
  /** A fingerprint of the page's text, when the caller computed one. */
  fp?: number | undefined;
}

/** One page of a walk, as `paginate()` yields it. */
export interface Page<T> {
  /** This page's items, as received. */
  items: T[];
  /** The cursor this page was asked with. */
  startAfter: string | undefined;
  /** The cursor for the next page (id of the last item that has an id); undefined on the last page. */
  next: string | undefined;
  /** 0-based page number within this walk. */
  index: number;
  /** Each item's JSON text as the server sent it, when known (same order as `items`). */
  raw?: string[] | undefined;
  /** Set for a page the caller recognised by its text: `items` is empty (the caller holds them). */
  known?: true | undefined;
  /** A fingerprint of the page's text, when the caller computed one. */
  fp?: number | undefined;
}

export interface PaginateOptions<T> {
  /** Resume a walk after this id. */
  startAfter?: string | undefined;
  /** How to read an item's id; default: `item.id` when it is a non-empty string. */
  idOf?: ((item: T) => string | undefined) | undefined;
  /**
   * Ask for the next page as soon as its cursor is known, before this page is yielded, so the
   * caller's work on a page overlaps the round trip of the next one. At most one page is read
   * ahead; when the caller stops early, that answer is dropped (abort it with the fetch's signal).
   */
  readAhead?: boolean | undefined;
}

/** The default id reader: `item.id` when it is a non-empty string, else undefined. */
export function defaultIdOf(item: unknown): string | undefined {
  if (item === null || typeof item !== "object") return undefined;
  const id = (item as { id?: unknown }).id;
  return typeof id === "string" && id.length > 0 ? id : undefined;
}

/**
 * Walk a cursor-paginated list. Pure: it knows the cursor rules and nothing about HTTP.
 *
 * - The end of the list is an empty page or a page with `hasMore: false`. A short page is not the
 *   end, because the server's page size is not documented as fixed.
 * - The next cursor is the id of the last item that has one; items without an id do not stop the
 *   walk (the caller quarantines them), but a non-empty page where no item has an id does.
 * - A cursor that does not advance, or a page that repeats an id already seen in this walk, is a
 *   server fault: a {@link PaginationError} ends the walk instead of looping forever. A page the
 *   caller recognised by its bytes (`known`) counts with its last id, the cursor it leads to.
 *
 * @example
 * for await (const page of paginate((after) => fetchMembers(after))) {
 *   store(page.items);
 * }
 */
export async function* paginate<T>(
  fetchPage: (startAfter: string | undefined) => Promise<PageResult<T>>,
  opts: PaginateOptions<T> = {},
): AsyncGenerator<Page<T>> {
  const idOf = opts.idOf ?? (defaultIdOf as (item: T) => string | undefined);
  const seen = new Set<string>();
  let cursor = opts.startAfter;
  let ahead: Promise<PageResult<T>> | undefined;
  const readAhead = (next: string) => {
    if (!opts.readAhead) return;
    ahead = fetchPage(next);
    // Awaited on the next turn; a caller that stops first must not leave it unhandled.
    ahead.catch(() => undefined);
  };
  for (let index = 0; ; index++) {
    const page = await (ahead ?? fetchPage(cursor));
    ahead = undefined;
    if (page.known) {
      // Its items are not read, but its last id (the next cursor) counts toward the cycle check
      // like any id of this walk: a cycle that runs through known pages must still end.
      const next = page.known.next;
      if (next !== undefined && next === cursor) {
        throw new PaginationError(`page ${index} (startAfter=${cursor}) ends with the cursor it was asked with: the cursor does not advance`);
      }
      if (next !== undefined && seen.has(next)) {
        throw new PaginationError(
          `page ${index} (startAfter=${cursor ?? "none"}) leads back to ${JSON.stringify(next)}, already seen in this walk: ` +
            "the server's cursor runs in a cycle, so the walk stops instead of looping",
        );
      }
      if (next !== undefined) seen.add(next);
      if (next !== undefined) readAhead(next);
      yield { items: [], startAfter: cursor, next, index, known: true, ...(page.fp !== undefined ? { fp: page.fp } : {}) };
      if (next === undefined) return;
      cursor = next;
      continue;
    }
    const items = page.items;
    if (items.length === 0) return;

    let lastId: string | undefined;
    for (const item of items) {
      const id = idOf(item);
      if (id === undefined) continue;
      if (seen.has(id)) {
        throw new PaginationError(
          `page ${index} (startAfter=${cursor ?? "none"}) repeats id ${JSON.stringify(id)} already seen in this walk: ` +
            "the server's cursor is not advancing, so the walk stops instead of looping",
        );
      }
      seen.add(id);
      lastId = id;
    }
    if (lastId === undefined) {
      throw new PaginationError(
        `page ${index} (startAfter=${cursor ?? "none"}) has ${items.length} item(s) and none has an id: the cursor cannot advance`,
      );
    }
    if (lastId === cursor) {
      throw new PaginationError(`page ${index} ends with the cursor it was asked with (${JSON.stringify(cursor)}): the cursor does not advance`);
    }

    const last = page.hasMore === false;
    if (!last) readAhead(lastId);
    yield {
      items,
      startAfter: cursor,
      next: last ? undefined : lastId,
      index,
      ...(page.raw ? { raw: page.raw } : {}),
      ...(page.fp !== undefined ? { fp: page.fp } : {}),
    };
    if (last) return;
    cursor = lastId;
  }
}
