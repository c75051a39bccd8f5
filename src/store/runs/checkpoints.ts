/**
 * The walk's checkpoint: one `_walk` row per run and scope (a resource plus its filters), written
 * in the same transaction as the changes of the pages it covers, so that a resumed walk starts
 * exactly after the last page the file holds.
 */
import type { Database, Statement } from "better-sqlite3";
import type { Scope } from "../walk/scopes.js";
import type { ScopeState } from "./run-state.js";

export interface CheckpointStep {
  readonly next: string | undefined;
  readonly records: number;
  /** Children the page's parents listed (the per-scope delete rule counts them). */
  readonly children: number;
  readonly complete: boolean;
  readonly quarantined: number;
}

export class Checkpoints {
  private readonly upsert: Statement;
  private readonly get: Statement;

  constructor(private readonly db: Database) {
    this.upsert = db.prepare(
      `INSERT INTO _walk (run_id, scope, resource, filters, cursor, pages, records, complete, quarantined, children)
       VALUES (@run_id, @scope, @resource, @filters, @cursor, @pages, @records, @complete, @quarantined, @children)
       ON CONFLICT (run_id, scope) DO UPDATE SET cursor = excluded.cursor, pages = pages + excluded.pages,
         records = records + excluded.records, complete = excluded.complete, quarantined = quarantined + excluded.quarantined,
         children = children + excluded.children`,
    );
    this.get = db.prepare("SELECT cursor, complete, pages, records, quarantined FROM _walk WHERE run_id = ? AND scope = ?");
  }

  /** Where a scope's walk stands in this run (a resumed run inherits it), or undefined. */
  state(runId: number, scope: Scope): (ScopeState & { quarantined: number }) | undefined {
    const row = this.get.get(runId, scope.key) as { cursor: string | null; complete: number; pages: number; records: number; quarantined: number } | undefined;
    return row && { cursor: row.cursor ?? undefined, complete: row.complete === 1, pages: row.pages, records: row.records, quarantined: row.quarantined };
  }

  /** Register a scope the run will walk from its beginning. */
  begin(runId: number, scope: Scope): void {
    this.upsert.run(row(runId, scope, { next: undefined, records: 0, children: 0, complete: false, quarantined: 0 }, 0));
  }

  /** Walk the scope again from its start (its tallies and quarantines add up). */
  restart(runId: number, scope: Scope): void {
    this.db.prepare("UPDATE _walk SET cursor = NULL, complete = 0 WHERE run_id = ? AND scope = ?").run(runId, scope.key);
  }

  /** One page of the scope is applied. */
  advance(runId: number, scope: Scope, step: CheckpointStep): void {
    this.upsert.run(row(runId, scope, step, 1));
  }

  /** A resumed run takes over the checkpoints (and the tallies) of the run it resumes. */
  inherit(runId: number, from: number): void {
    this.db
      .prepare(
        `INSERT INTO _walk (run_id, scope, resource, filters, cursor, pages, records, complete, quarantined, children)
         SELECT ?, scope, resource, filters, cursor, pages, records, complete, quarantined, children FROM _walk WHERE run_id = ?`,
      )
      .run(runId, from);
  }

  /** Whether a run left any checkpoint (a run that never walked cannot be resumed). */
  any(runId: number): boolean {
    return this.db.prepare("SELECT 1 FROM _walk WHERE run_id = ? LIMIT 1").get(runId) !== undefined;
  }

  /** The keys of a run's complete scopes. */
  complete(runId: number): Set<string> {
    return new Set(this.db.prepare("SELECT scope FROM _walk WHERE run_id = ? AND complete = 1").pluck().all(runId) as string[]);
  }

  /** Records and children walked per scope over the run's chain. */
  tallies(runId: number): Map<string, { records: number; children: number }> {
    const rows = this.db.prepare("SELECT scope, records, children FROM _walk WHERE run_id = ?").all(runId) as { scope: string; records: number; children: number }[];
    return new Map(rows.map((r) => [r.scope, { records: r.records, children: r.children }]));
  }

  drop(runId: number): void {
    this.db.prepare("DELETE FROM _walk WHERE run_id = ?").run(runId);
  }
}

function row(runId: number, scope: Scope, step: CheckpointStep, pages: number) {
  return {
    run_id: runId,
    scope: scope.key,
    resource: scope.resource,
    filters: JSON.stringify(scope.filters),
    cursor: step.next ?? null,
    pages,
    records: step.records,
    complete: step.complete ? 1 : 0,
    quarantined: step.quarantined,
    children: step.children,
  };
}
