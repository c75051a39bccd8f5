/**
 * The warehouse's `runs` (one row per snapshot run it holds: start, finish, status, what it walked)
 * and `run_counts` (per run and resource, as the snapshot's `run_counts`), written in the load that
 * applies the run: the times an analyst dates "as of run N" with, as timestamptz.
 */
import type pg from "pg";
import type { RunRecord } from "../run-records.js";

export function runsDdl(s: string): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${s}.runs (run_id bigint PRIMARY KEY, job text NOT NULL, status text NOT NULL, started_at timestamptz NOT NULL, finished_at timestamptz, ` +
      `resources text[], claims_from date, claims_to date, options jsonb NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${s}.run_counts (run_id bigint NOT NULL, resource text NOT NULL, seen bigint NOT NULL, inserted bigint NOT NULL, updated bigint NOT NULL, ` +
      `deleted bigint NOT NULL, unchanged bigint NOT NULL, quarantined bigint NOT NULL, PRIMARY KEY (run_id, resource))`,
  ];
}

/** Record the load's runs (a handful of rows: one statement each). */
export async function writeRuns(client: pg.Client, s: string, records: readonly RunRecord[]): Promise<void> {
  for (const r of records) {
    await client.query(
      `INSERT INTO ${s}.runs (run_id, job, status, started_at, finished_at, resources, claims_from, claims_to, options) ` +
        `SELECT $1, $2, $3, $4, $5, ARRAY(SELECT jsonb_array_elements_text(CASE jsonb_typeof(o->'resources') WHEN 'array' THEN o->'resources' ELSE '[]'::jsonb END)), ` +
        `CASE WHEN o->'claimsWindow'->>'from' ~ '^\\d{4}-\\d{2}-\\d{2}$' THEN (o->'claimsWindow'->>'from')::date END, ` +
        `CASE WHEN o->'claimsWindow'->>'to' ~ '^\\d{4}-\\d{2}-\\d{2}$' THEN (o->'claimsWindow'->>'to')::date END, o ` +
        `FROM (SELECT $6::jsonb AS o) x ON CONFLICT (run_id) DO NOTHING`,
      [r.runId, r.job, r.status, r.startedAt, r.finishedAt, r.options],
    );
    for (const c of r.counts) {
      await client.query(`INSERT INTO ${s}.run_counts VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (run_id, resource) DO NOTHING`, [
        r.runId, c.resource, c.seen, c.inserted, c.updated, c.deleted, c.unchanged, c.quarantined,
      ]);
    }
  }
}
