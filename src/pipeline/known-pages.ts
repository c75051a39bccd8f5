/**
 * The pages of each scope that the snapshot holds whole, which the walk recognises by their bytes
 * (see pageInputs). The walk holds only the scopes in progress and the next few (a million
 * members: 67k pages in all). A lookup stores only what it selects, and the group list is always
 * read: neither recognises pages.
 *
 * The fan-out asks for the next waves of scopes' pages as each scope's walk begins, so the answer
 * is in when a scope's first page is. Asked at the scope's own start, the answer came after every
 * page the store had queued: each of a 100k-member walk's 400 scopes waited 2 to 6 ms on it, and on
 * a first re-sync after a load, asking one wave ahead, the walk still waited 0.84 s in all.
 */
import type { Scope } from "../store/walk/scopes.js";
import type { SnapshotPort } from "../store/snapshot-port.js";
import type { Keep } from "./delete-lookups.js";
import type { KnownPageMap } from "./page-inputs.js";

/** Waves of scopes asked ahead: at a million members a scope has about 170 pages, 16 scopes' a few hundred KB. */
const KNOWN_PAGES_AHEAD = 4;

export class KnownPages {
  private readonly asked = new Map<string, Promise<KnownPageMap>>();
  private order: readonly Scope[] = [];
  private readonly at = new Map<string, number>();
  private ahead = 0;

  /** `recognises`: the walk fingerprints pages (the store is on its own thread's terms). */
  constructor(
    private readonly port: SnapshotPort,
    private readonly recognises: boolean,
  ) {}

  /** The fan-out's scopes still to walk, in the order they begin, `concurrency` at a time. */
  plan(scopes: readonly Scope[], concurrency: number): void {
    this.order = scopes;
    this.at.clear();
    scopes.forEach((s, i) => this.at.set(s.key, i));
    this.ahead = KNOWN_PAGES_AHEAD * concurrency;
  }

  /** A planned scope's walk begins: ask for the pages of the scopes after it. */
  began(scope: Scope): void {
    const i = this.at.get(scope.key);
    if (!this.recognises || i === undefined) return;
    for (const next of this.order.slice(i + 1, i + 1 + this.ahead)) {
      if (this.asked.has(next.key)) continue;
      const asked = this.ask(next);
      asked.catch(() => undefined); // a failure is the store's, reported by the walk that awaits it
      this.asked.set(next.key, asked);
    }
  }

  /** A scope's known pages, as its walk begins: the answer asked ahead, or asked now. */
  of(scope: Scope, keep: Keep | undefined): Promise<KnownPageMap> {
    if (!this.recognises || keep || scope.resource === "groups") return Promise.resolve(new Map());
    const asked = this.asked.get(scope.key);
    this.asked.delete(scope.key);
    return asked ?? this.ask(scope);
  }

  private ask(scope: Scope): Promise<KnownPageMap> {
    return this.port.knownPages(scope.key).then((pages) => new Map(pages.map(([cursor, fp, next]) => [cursor, { fp, next: next ?? undefined }])));
  }
}
