/** Compare a Postgres warehouse with the SQLite snapshot it was loaded from, as of a run. */
import type { Database } from "better-sqlite3";
import { withoutPlainSsn } from "../../../src/sinks/plain-ssn.js";
import { StoredResources, type StoredResource } from "../../../src/store/schema/resources.js";
import { typedFields } from "../../../src/sinks/typed-fields.js";

/** The columns the warehouse types as timestamptz: compared as instants (ISO 8601 in UTC, milliseconds). */
const Instants = new Set(["createdAt"]);
const instant = (v: unknown): string | null => {
  if (v === null || v === undefined) return null;
  const t = new Date(String(v));
  return Number.isNaN(t.getTime()) ? null : t.toISOString();
};
const pgColumn = (c: string): string => (Instants.has(c.slice(1, -1)) ? `to_char(${c} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${c}` : `${c}::text`);

type Q = <T = Record<string, unknown>>(url: string, sql: string, params?: unknown[]) => Promise<T[]>;

export interface Side {
  current: Record<StoredResource, unknown[]>;
  history: Record<StoredResource, unknown[]>;
}

const byKey = (a: { k: string }, b: { k: string }) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0);

/** The snapshot as of run `asOf`: current rows (id, typed columns as text, data) and every version up to it. */
export function snapshotAsOf(db: Database, asOf: number): Side {
  const out: Side = { current: {} as Side["current"], history: {} as Side["history"] };
  for (const r of StoredResources) {
    const cols = typedFields(r).map((f) => `"${f.name}"`);
    const rows = db
      .prepare(`SELECT id, valid_from_run, valid_to_run, ${cols.join(", ")}, d.data FROM _${r}_v v JOIN _${r}_d d ON d.vid = v.vid WHERE valid_from_run <= ? ORDER BY id, valid_from_run`)
      .all(asOf) as Record<string, unknown>[];
    const hist = rows.map((x) => ({
      k: `${x.id}\u0000${String(x.valid_from_run).padStart(9, "0")}`,
      id: x.id,
      from: Number(x.valid_from_run),
      to: x.valid_to_run !== null && Number(x.valid_to_run) <= asOf ? Number(x.valid_to_run) : null,
      data: withoutPlainSsn(JSON.parse(String(x.data))),
    }));
    out.history[r] = hist.sort(byKey).map(({ k: _k, ...rest }) => rest);
    out.current[r] = rows
      .filter((x) => x.valid_to_run === null || Number(x.valid_to_run) > asOf)
      .map((x) => ({
        k: String(x.id),
        id: x.id,
        cols: cols.map((c) => (Instants.has(c.slice(1, -1)) ? instant(x[c.slice(1, -1)]) : (x[c.slice(1, -1)] ?? null))),
        data: withoutPlainSsn(JSON.parse(String(x.data))),
      }))
      .sort(byKey)
      .map(({ k: _k, ...rest }) => rest);
  }
  return out;
}

export async function warehouse(query: Q, url: string, schema = "benefits_sync"): Promise<Side & { loads: number[] }> {
  const out: Side = { current: {} as Side["current"], history: {} as Side["history"] };
  for (const r of StoredResources) {
    const cols = typedFields(r).map((f) => `"${f.name}"`);
    const cur = await query<Record<string, unknown>>(url, `SELECT id, ${cols.map(pgColumn).join(", ")}, data::text AS data FROM ${schema}."${r}"`);
    out.current[r] = cur
      .map((x) => ({ k: String(x.id), id: x.id, cols: cols.map((c) => x[c.slice(1, -1)] ?? null), data: JSON.parse(String(x.data)) }))
      .sort(byKey)
      .map(({ k: _k, ...rest }) => rest);
    const hist = await query<Record<string, unknown>>(url, `SELECT id, valid_from_run, valid_to_run, data::text AS data FROM ${schema}."${r}_history"`);
    out.history[r] = hist
      .map((x) => ({
        k: `${x.id}\u0000${String(x.valid_from_run).padStart(9, "0")}`,
        id: x.id,
        from: Number(x.valid_from_run),
        to: x.valid_to_run === null ? null : Number(x.valid_to_run),
        data: JSON.parse(String(x.data)),
      }))
      .sort(byKey)
      .map(({ k: _k, ...rest }) => rest);
  }
  const loads = (await query<{ run_id: string }>(url, `SELECT run_id FROM ${schema}._loads ORDER BY run_id`)).map((x) => Number(x.run_id));
  return { ...out, loads };
}
