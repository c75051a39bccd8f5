import type { Database } from "better-sqlite3";
import type { StoredResource } from "../../src/store/schema/resources.js";
import type { MemoryData } from "./memory-source.js";
import { expectedMasked } from "./ssn-oracle.js";

export type State = Record<StoredResource, Map<string, unknown>>;

/** What the snapshot should hold for a data set: children split out with their parent's id, SSNs masked. */
export function expectedState(data: MemoryData, piiKey: Buffer): State {
  const s: State = { designs: new Map(), groups: new Map(), plans: new Map(), members: new Map(), coverages: new Map(), claims: new Map() };
  for (const d of data.designs) s.designs.set(String(d.id), norm(d));
  for (const g of data.groups) {
    const { plans, ...rest } = g;
    s.groups.set(String(g.id), norm(rest));
    for (const p of (plans as Record<string, unknown>[] | undefined) ?? []) s.plans.set(String(p.id), norm({ ...p, groupPolicyId: g.id }));
  }
  for (const m of data.members) {
    const { coverages, ...rest } = expectedMasked(m, piiKey);
    s.members.set(String(m.id), norm(rest));
    for (const c of (coverages as Record<string, unknown>[] | undefined) ?? []) s.coverages.set(String(c.id), norm({ ...c, memberId: m.id }));
  }
  for (const c of data.claims) s.claims.set(String(c.id), norm(c));
  return s;
}

/** The snapshot's current state, read through the public views. */
export function snapshotState(db: Database): State {
  const s = {} as State;
  for (const r of ["designs", "groups", "plans", "members", "coverages", "claims"] as const) {
    s[r] = new Map((db.prepare(`SELECT id, data FROM ${r}`).all() as { id: string; data: string }[]).map((x) => [x.id, norm(JSON.parse(x.data))]));
  }
  return s;
}

/** The changes a run recorded, as sorted `resource op id` strings. */
export function recordedChanges(db: Database, runIds: number | number[]): string[] {
  const ids = Array.isArray(runIds) ? runIds : [runIds];
  return (
    db.prepare(`SELECT resource, op, id FROM changes WHERE run_id IN (${ids.map(() => "?").join(",")})`).all(...ids) as {
      resource: string;
      op: string;
      id: string;
    }[]
  )
    .map((c) => `${c.resource} ${c.op} ${c.id}`)
    .sort();
}

/** The changes that turn state `a` into state `b`, in the same form. */
export function diffStates(a: State, b: State): string[] {
  const out: string[] = [];
  for (const r of Object.keys(a) as StoredResource[]) {
    for (const [id, v] of b[r]) {
      if (!a[r].has(id)) out.push(`${r} insert ${id}`);
      else if (JSON.stringify(a[r].get(id)) !== JSON.stringify(v)) out.push(`${r} update ${id}`);
    }
    for (const id of a[r].keys()) if (!b[r].has(id)) out.push(`${r} delete ${id}`);
  }
  return out.sort();
}

/** Key-sorted deep copy, so that JSON.stringify compares records by content. */
export function norm(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(norm);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => [k, norm((v as Record<string, unknown>)[k])]),
  );
}

export function stateToObject(s: State): Record<string, Record<string, unknown>> {
  return Object.fromEntries(Object.entries(s).map(([r, m]) => [r, Object.fromEntries(m)]));
}
