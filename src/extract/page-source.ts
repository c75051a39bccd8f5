import type { Page } from "../api/paginate.js";
import type { KnownPages } from "../api/client.js";
import type { WalkedResource } from "../store/schema/resources.js";

type PageOptions = { startAfter?: string; signal?: AbortSignal };

/**
 * The slice of the service client the extractors use: pages from a cursor, with the items not
 * validated (one bad item is quarantined instead of failing the walk).
 */
export interface PageSource {
  pages(resource: WalkedResource, filters?: Record<string, string | undefined>, opts?: PageOptions): AsyncGenerator<Page<unknown>>;
  /**
   * The same pages with each item as the JSON text the server sent, unparsed. When a source has
   * it, the sync uses it: the text is parsed once, where it is stored.
   */
  rawPages?(resource: WalkedResource, filters?: Record<string, string | undefined>, opts?: PageOptions & { known?: KnownPages }): AsyncGenerator<Page<string>>;
  /**
   * One member by id, as the JSON text the server sent; undefined when the service has none (404).
   * With it, the sync looks a member up before recording it deleted.
   */
  memberText?(id: string, opts?: { signal?: AbortSignal }): Promise<string | undefined>;
}
