/**
 * Which current records a finished walk proves gone: per resource, the ids that no complete walk
 * of their scope saw (see `provenAbsent`), after the absence policy, with the guard's verdict.
 * Read-only except for the absence counters; the store applies the plan (or refuses it).
 */
import type { Database } from "better-sqlite3";
import type { WalkedResource } from "./resources.js";
import { provenAbsent, type Candidate, type Scope } from "./scopes.js";
import type { ActiveRun, DeletePolicy } from "./snapshot.js";

export interface DeletePlan {
  readonly resource: WalkedResource;
  readonly ids: string[];
  /** Records of the resource's walked scopes: seen, plus proven gone. */
  readonly scopeSize: number;
  /** Over the guard: the run fails before anything is applied. */
  readonly blocked: boolean;
}

export function planDeletes(db: Database, run: ActiveRun, policy: DeletePolicy): DeletePlan[] {
  const plans: DeletePlan[] = [];
  const byResource = new Map<WalkedResource, Scope[]>();
  for (const s of run.scopes.values()) byResource.set(s.resource, [...(byResource.get(s.resource) ?? []), s]);
  const completeKeys = new Set(
    (db.prepare("SELECT scope FROM _walk WHERE run_id = ? AND complete = 1").pluck().all(run.runId) as string[]),
  );
  for (const [resource, scopes] of byResource) {
    const complete = scopes.filter((s) => completeKeys.has(s.key));
    // Nothing to prove gone where nothing was stored before the walk began.
    if (complete.length === 0 || run.fresh.has(resource)) continue;
    const seenCount = db
      .prepare(resource === "members" ? "SELECT COUNT(*) FROM _seen WHERE resource = ?" : "SELECT COALESCE(SUM(json_array_length(ids)), 0) FROM _seen_pages WHERE resource = ?")
      .pluck()
      .get(resource) as number;
    // Without quarantine, every id seen is current: when as many were seen as are current, none
    // is missing, and the scan for the missing ones (a join over every current id) is not needed.
    const currentCount = db.prepare(`SELECT COUNT(*) FROM _${resource}_v WHERE valid_to_run IS NULL`).pluck().get() as number;
    const quarantinedHere = scopes.some((sc) => (run.quarantinedByScope.get(sc.key) ?? 0) > 0);
    const allSeen = !quarantinedHere && seenCount >= currentCount;
    const found = allSeen ? [] : candidates(db, resource);
    const proven = found.filter((c) => provenAbsent(c, complete, scopes));
    const ids: string[] = [];
    const bump = db.prepare(
      "INSERT INTO _absence (resource, id, count) VALUES (?, ?, 1) ON CONFLICT (resource, id) DO UPDATE SET count = count + 1 RETURNING count",
    );
    for (const c of proven) {
      const n = policy.absenceRuns <= 1 ? 1 : ((bump.get(resource, c.id) as { count: number }).count);
      if (n >= policy.absenceRuns) ids.push(c.id);
    }
    const scopeSize = seenCount + proven.length;
    const blocked = ids.length > policy.maxDeleteCount && ids.length > policy.maxDeleteShare * scopeSize;
    plans.push({ resource, ids, scopeSize, blocked });
  }
  return plans;
}

/** Current records of a resource that this run's walk did not see. */
function candidates(db: Database, resource: WalkedResource): Candidate[] {
  const extra = resource === "claims" ? ", json_extract(v.data, '$.serviceDateFrom') AS serviceDate" : "";
  const rows = db
    .prepare(
      `SELECT v.id, v.part${extra} FROM _${resource}_v v
       WHERE v.valid_to_run IS NULL AND v.id NOT IN (${seenIdsSql(resource)})`,
    )
    .all(resource) as { id: string; part: string | null; serviceDate?: string | null }[];
  if (resource !== "members") return rows;
  const groupsOf = db.prepare(
    "SELECT DISTINCT json_extract(data, '$.groupId') FROM _coverages_v WHERE part = ? AND valid_to_run IS NULL",
  ).pluck();
  return rows.map((r) => ({ ...r, groups: (groupsOf.all(r.id) as (string | null)[]).filter((g): g is string => g !== null) }));
}

/** SQL for the ids a run has seen of a resource (one `?` parameter: the resource). */
export function seenIdsSql(resource: WalkedResource): string {
  return resource === "members"
    ? "SELECT id FROM _seen WHERE resource = ?"
    : "SELECT j.value FROM _seen_pages p, json_each(p.ids) j WHERE p.resource = ?";
}
