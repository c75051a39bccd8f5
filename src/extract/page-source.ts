import type { Page } from "../api/paginate.js";
import type { WalkedResource } from "../store/resources.js";

/**
 * The slice of the service client the extractors use: raw pages (items not validated, so one
 * bad item can be quarantined instead of failing the walk) from a cursor.
 */
export interface PageSource {
  pages(
    resource: WalkedResource,
    filters?: Record<string, string | undefined>,
    opts?: { startAfter?: string; signal?: AbortSignal },
  ): AsyncGenerator<Page<unknown>>;
}
