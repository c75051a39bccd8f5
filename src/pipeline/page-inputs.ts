/**
 * What the walk hands the store for each page: a source's pages turned into page inputs, and the
 * share of their encoding done on the walk's thread. Pure but for the source it reads.
 */
import { topLevelString } from "../api/raw-items.js";
import type { PageSource } from "../extract/page-source.js";
import { requestFilters } from "../extract/scopes.js";
import type { Encoder } from "../store/walk/prepare-page.js";
import type { Scope } from "../store/walk/scopes.js";
import { itemsOf, type PageInput } from "../store/snapshot-port.js";
import type { Keep } from "./delete-lookups.js";

/** One scope's pages the snapshot holds whole, by cursor ('' for the first): recognised by their bytes, not read again. */
export type KnownPageMap = ReadonlyMap<string, { readonly fp: number; readonly next: string | undefined }>;

/**
 * A scope's pages as the store takes them: each item's text when the source can give it (the
 * store parses it on its own thread), a page the snapshot knows recognised by its bytes (`known`,
 * awaited only once a page's bytes are in, so that asking the store overlaps the first fetch), a member
 * looked up by id (`members?id=`) as a page of one record or none, and for a lookup (`keep`) only
 * the items it selects.
 */
export function pageInputs(
  source: PageSource,
  scope: Scope,
  startAfter: string | undefined,
  o: { readonly signal: AbortSignal; readonly encoder: Encoder | undefined; readonly known: Promise<KnownPageMap>; readonly keep?: Keep },
): AsyncGenerator<PageInput & { items?: readonly unknown[] }> {
  const keep = o.keep;
  const pageOpts = { signal: o.signal, ...(startAfter !== undefined ? { startAfter } : {}) };
  const filters = requestFilters(scope);
  const lookupId = scope.filters.id;
  if (lookupId !== undefined && source.memberText) {
    // One member by id: a page of one record, or of none when the service answers 404.
    const lookup = source.memberText.bind(source);
    const signal = o.signal;
    return (async function* () {
      const text = await lookup(lookupId, { signal });
      yield { raw: text === undefined ? [] : [text], next: undefined, end: true };
    })();
  }
  if (keep) {
    // A lookup, not a walk to store: only the records asked about are applied.
    const pages = source.pages(scope.resource, filters, pageOpts);
    return (async function* () {
      for await (const p of pages) {
        const items = p.items.filter((i) => i !== null && typeof i === "object" && keep(i as Record<string, unknown>));
        yield { items, next: p.next, end: p.next === undefined };
      }
    })();
  }
  if (source.rawPages) {
    const known = o.known;
    const fingerprints = o.encoder;
    const pages = source.rawPages(scope.resource, filters, {
      ...pageOpts,
      // The groups walk must see every group (the fan-out is built from it): always read it.
      ...(fingerprints && scope.resource !== "groups"
        ? {
            known: {
              fingerprint: (chunks: readonly Uint8Array[]) => fingerprints.pageFingerprint(chunks),
              lookup: async (after: string | undefined, fp: number) => {
                const k = (await known).get(after ?? "");
                return k && k.fp === fp ? { next: k.next } : undefined;
              },
            },
          }
        : {}),
    });
    return (async function* () {
      for await (const p of pages) {
        yield {
          raw: p.items,
          next: p.next,
          end: p.next === undefined,
          ...(p.fp !== undefined ? { pageFp: { startAfter: p.startAfter, fp: p.fp } } : {}),
          ...(p.known ? { known: true } : {}),
        };
      }
    })();
  }
  const pages = source.pages(scope.resource, filters, pageOpts);
  return (async function* () {
    for await (const p of pages) yield { items: p.items, raw: p.raw, next: p.next, end: p.next === undefined };
  })();
}

/**
 * The share of a page's work done on this thread. With `encodeAll` (a resource that was empty
 * when the run began, all inserts, while the store has pages enough to work on), every record is
 * parsed and encoded here. Otherwise only ids and texts go across; the store fingerprints them
 * and parses the records that need a look (on a load from empty, all of them).
 */
export function encodePage(encoder: Encoder, scope: Scope, page: PageInput, encodeAll: boolean): PageInput {
  if (page.known) return page;
  const meta = { next: page.next, end: page.end, ...(page.pageFp ? { pageFp: page.pageFp } : {}) };
  if (!page.raw || encodeAll) {
    return { prepared: encoder.prepare(scope.resource, itemsOf(page), page.raw, encodeAll), ...meta };
  }
  const idField = encoder.idField(scope.resource);
  const ids: string[] = [];
  const raw: string[] = [];
  const odd: unknown[] = [];
  for (const text of page.raw) {
    const id = text.charCodeAt(0) === 0x7b ? topLevelString(text, idField) : undefined;
    if (id) {
      ids.push(id);
      raw.push(text);
    } else odd.push(itemsOf({ raw: [text], next: undefined, end: false })[0]);
  }
  // Items without a usable id are quarantined: the full check runs on them alone.
  const problems = odd.length ? encoder.prepare(scope.resource, odd, undefined, false).problems : [];
  return { lazy: { ids, raw, problems }, ...meta };
}
