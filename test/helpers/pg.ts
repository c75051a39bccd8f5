/**
 * A throwaway PostgreSQL for a test file: one cluster (bench/pg-cluster.ts) started in beforeAll,
 * a fresh database per call of `freshDatabase()`. When PostgreSQL cannot start, the tests that need
 * it are skipped with the reason, except under CI=true, where they fail: CI installs PostgreSQL
 * (.ci/run), so a cluster that does not start there is a defect, not an absence.
 */
import pg from "pg";
import { afterAll, beforeAll, type TestContext } from "vitest";
import { startPgCluster, type PgCluster } from "../../bench/pg-cluster.js";

export interface PgHandle {
  /** The cluster, once started (undefined when skipped). */
  cluster(): PgCluster;
  /** A new empty database; its URL (with `schema` unset: the sink's default). */
  freshDatabase(ctx: TestContext): Promise<string>;
  /** Run SQL on a database URL (a short-lived client). */
  query<T = Record<string, unknown>>(url: string, sql: string, params?: unknown[]): Promise<T[]>;
}

export function usePostgres(): PgHandle {
  let cluster: PgCluster | undefined;
  let problem: string | undefined;
  let n = 0;
  beforeAll(async () => {
    try {
      cluster = await startPgCluster();
    } catch (e) {
      problem = e instanceof Error ? e.message : String(e);
      if (process.env.CI === "true") throw new Error(`CI=true and PostgreSQL is needed: ${problem}`);
    }
  });
  afterAll(async () => {
    await cluster?.stop();
  });
  const query = async <T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query(sql, params)).rows as T[];
    } finally {
      await c.end();
    }
  };
  return {
    cluster: () => cluster!,
    async freshDatabase(ctx) {
      if (!cluster) {
        ctx.skip(`PostgreSQL is not available: ${problem}`);
        throw new Error("skipped");
      }
      const name = `t${process.pid}_${++n}`;
      await query(cluster.url, `CREATE DATABASE ${name}`);
      return cluster.url.replace("/postgres?", `/${name}?`);
    },
    query,
  };
}
