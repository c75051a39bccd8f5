/**
 * Which current records a finished walk proves gone, and whether the delete guard lets them go.
 *
 * - Parents (designs, groups, members, claims): the ids that no complete walk of their scope saw
 *   (see `provenAbsent`), after the absence policy.
 * - Children (plans, coverages): those a re-read parent no longer lists (`_child_gone`), unless
 *   the child turned up under another parent in the same walk (then it was updated, and the
 *   version noted is no longer current).
 *
 * The guard, per resource, children included: more than `maxDeleteShare` of the resource's scope
 * and more than `maxDeleteCount` records fails the run. Per scope: a complete scope that listed no
 * record (or whose parents listed no child) while the run would delete at least `emptyScopeMin`
 * of its records fails the run too, whatever the share: a listing that drops from many to none
 * is far more often a broken answer than a real change.
 *
 * Read-only except for the absence counters; the run lifecycle applies the plan (or refuses it).
 */
import type { Database } from "better-sqlite3";
import { ChildOf, type StoredResource, type WalkedResource } from "../schema/resources.js";
import { isLookup, provenAbsent, windowMissed, type Candidate, type Scope } from "./scopes.js";
import type { ActiveRun, DeletePolicy } from "../runs/run-state.js";
import { seenIdsSql, type SeenIds } from "./seen-ids.js";
import type { Checkpoints } from "../runs/checkpoints.js";

export interface DeletePlan {
  readonly resource: StoredResource;
  /** Parents: the ids to delete (with their children). */
  readonly ids: readonly string[];
  /** Children: the version ids to close. */
  readonly vids: readonly number[];
  /** Records of the resource's walked scopes: seen, plus proven gone. */
  readonly scopeSize: number;
  /** Why the guard refuses it, when it does. */
  readonly blocked: string | undefined;
}

export function planDeletes(db: Database, run: ActiveRun, policy: DeletePolicy, seen: SeenIds, checkpoints: Checkpoints): DeletePlan[] {
  const plans: DeletePlan[] = [];
  const byResource = new Map<WalkedResource, Scope[]>();
  for (const s of run.scopes.values()) if (!readsAgain(s)) byResource.set(s.resource, [...(byResource.get(s.resource) ?? []), s]);
  const completeKeys = checkpoints.complete(run.runId);
  const tallies = checkpoints.tallies(run.runId);
  const bump = db.prepare(
    "INSERT INTO _absence (resource, id, count) VALUES (?, ?, 1) ON CONFLICT (resource, id) DO UPDATE SET count = count + 1 RETURNING count",
  );
  for (const [resource, scopes] of byResource) {
    const complete = scopes.filter((s) => completeKeys.has(s.key));
    // Nothing to prove gone where nothing was stored before the walk began.
    if (complete.length > 0 && !run.fresh.has(resource)) {
      const { proven, seenCount } = provenGone(db, run, resource, scopes, complete, seen);
      const ids: string[] = [];
      for (const c of proven) {
        const n = policy.absenceRuns <= 1 ? 1 : (bump.get(resource, c.id) as { count: number }).count;
        if (n >= policy.absenceRuns) ids.push(c.id);
      }
      // The guard can only refuse more than maxDeleteCount deletes: only then is the exact
      // number of records seen worth its scan.
      const scopeSize = (ids.length > policy.maxDeleteCount ? seen.count(resource, true) : seenCount) + proven.length;
      const going = new Set(ids);
      const emptied = complete
        .filter((s) => !isLookup(s) && (tallies.get(s.key)?.records ?? 0) === 0)
        .map((s) => ({ key: s.key, n: proven.filter((c) => going.has(c.id) && belongsTo(c, s)).length }))
        .filter((e) => e.n >= policy.emptyScopeMin);
      plans.push({ resource, ids, vids: [], scopeSize, blocked: verdict(ids.length, scopeSize, policy, emptied, "listed no record") });
    }
    const child = ChildOf[resource];
    if (child && !run.fresh.has(child.child)) plans.push(childPlan(db, run, child.child, policy, tallies));
  }
  return plans;
}

/** The current records of a resource that the run's complete scopes prove gone (before the absence policy). */
function provenGone(db: Database, run: ActiveRun, resource: WalkedResource, scopes: Scope[], complete: Scope[], seen: SeenIds): { proven: Candidate[]; seenCount: number } {
  const seenCount = seen.count(resource);
  // Without quarantine, every id seen is current: when as many distinct ids were seen as are
  // current, none is missing, and the scan for the missing ones (a join over every current id) is
  // not needed.
  const currentCount = db.prepare(`SELECT COUNT(*) FROM _${resource}_v WHERE valid_to_run IS NULL`).pluck().get() as number;
  const quarantinedHere = scopes.some((sc) => (run.quarantinedByScope.get(sc.key) ?? 0) > 0);
  const allSeen = !quarantinedHere && noneMissing(seen, resource, seenCount, currentCount);
  return { proven: (allSeen ? [] : candidates(db, resource)).filter((c) => provenAbsent(c, complete, scopes)), seenCount };
}

/**
 * Whether as many distinct ids were seen as are current. The count of ids listed is a bound only:
 * a record that moved during the walk (a claim to a group walked later) is listed twice, and would
 * hide as many records really gone. Only when it reaches the current count is the exact one (a
 * scan) asked for; members are kept one row per id, so their count is exact.
 */
function noneMissing(seen: SeenIds, resource: WalkedResource, seenCount: number, currentCount: number): boolean {
  return seenCount >= currentCount && (resource === "members" || seen.count(resource, true) >= currentCount);
}

/**
 * A scope that reads records again (one member by id, or a listing again to confirm a child's
 * delete) proves nothing about what a walk missed: its records count as seen, but it never stands
 * for a complete walk of a group (whose own walk may have been incomplete).
 */
function readsAgain(s: Scope): boolean {
  return s.filters.id !== undefined || s.filters.confirm !== undefined;
}

export interface DeleteCandidates {
  /** Members no complete walk listed: each is looked up by id before it is deleted. */
  readonly members: readonly string[];
  /** Coverages their member no longer lists, with their group: its members are read again. */
  readonly coverages: readonly { readonly id: string; readonly groupId: string | null }[];
  /** Plans their group no longer lists: the groups are read again. */
  readonly plans: readonly string[];
}

/**
 * What the run would delete, before anything is: the sync confirms each (a member by a lookup,
 * a child by reading again the listings that could hold it), since a record that moved during
 * the walk from a part not yet read to one already read was listed by no page, yet is alive.
 */
export function deleteCandidates(db: Database, run: ActiveRun, seen: SeenIds, checkpoints: Checkpoints): DeleteCandidates {
  const completeKeys = checkpoints.complete(run.runId);
  const memberScopes = [...run.scopes.values()].filter((s) => s.resource === "members" && !readsAgain(s));
  const complete = memberScopes.filter((s) => completeKeys.has(s.key));
  const members = complete.length > 0 && !run.fresh.has("members") ? provenGone(db, run, "members", memberScopes, complete, seen).proven.map((c) => c.id) : [];
  const gone = (child: "coverages" | "plans", extra: string) =>
    db
      .prepare(
        `SELECT v.id${extra} FROM _child_gone g JOIN _${child}_v v ON v.vid = g.vid
         WHERE g.resource = ? AND v.valid_to_run IS NULL ORDER BY v.id`,
      )
      .all(child) as { id: string; groupId?: string | null }[];
  return {
    members,
    coverages: gone("coverages", ", v.groupId").map((r) => ({ id: r.id, groupId: r.groupId ?? null })),
    plans: gone("plans", "").map((r) => r.id),
  };
}

/**
 * Whether the listing read again to confirm a child's delete quarantined an item (one without a
 * usable id): that item may be the parent that lists the child now, so the delete waits for a run
 * whose confirmation reads whole.
 */
function unconfirmable(run: ActiveRun, child: StoredResource, groupId: string | null): boolean {
  for (const s of run.scopes.values()) {
    if (s.filters.confirm === undefined || (run.quarantinedByScope.get(s.key) ?? 0) === 0) continue;
    if (child === "plans" && s.resource === "groups") return true;
    if (child === "coverages" && s.resource === "members" && s.filters.groupId === groupId) return true;
  }
  return false;
}

/**
 * Whether a record proven gone was one of a scope's (the per-scope rule counts it there). A claim
 * is one of its own group's scope only: a claim of another group (or of a group gone from the
 * listing) was never this scope's to list, so its delete says nothing about this scope emptying.
 */
function belongsTo(c: Candidate, s: Scope): boolean {
  if (s.resource === "members") return !c.groups || c.groups.length === 0 || c.groups.includes(s.filters.groupId ?? "");
  if (s.resource === "claims") return (s.filters.groupId === undefined || s.filters.groupId === c.part) && windowMissed(c, [s]);
  return true;
}

/** Children that re-read parents no longer list and that are still at the version noted. */
function childPlan(db: Database, run: ActiveRun, child: StoredResource, policy: DeletePolicy, tallies: Map<string, { records: number; children: number }>): DeletePlan {
  const rows = (
    db
      .prepare(
        `SELECT g.vid, g.scope, json_extract(d.data, '$.groupId') AS groupId FROM _child_gone g JOIN _${child}_v v ON v.vid = g.vid JOIN _${child}_d d ON d.vid = v.vid
         WHERE g.resource = ? AND v.valid_to_run IS NULL ORDER BY g.vid`,
      )
      .all(child) as { vid: number; scope: string; groupId: string | null }[]
  ).filter((r) => !unconfirmable(run, child, r.groupId));
  const scopeSize = db.prepare(`SELECT COUNT(*) FROM _${child}_v WHERE valid_to_run IS NULL`).pluck().get() as number;
  const perScope = new Map<string, number>();
  for (const r of rows) perScope.set(r.scope, (perScope.get(r.scope) ?? 0) + 1);
  const emptied = [...perScope]
    .filter(([key, n]) => (tallies.get(key)?.children ?? 0) === 0 && n >= policy.emptyScopeMin)
    .map(([key, n]) => ({ key, n }));
  return { resource: child, ids: [], vids: rows.map((r) => r.vid), scopeSize, blocked: verdict(rows.length, scopeSize, policy, emptied, `listed no ${child}`) };
}

function verdict(n: number, scopeSize: number, policy: DeletePolicy, emptied: { key: string; n: number }[], what: string): string | undefined {
  const reasons: string[] = [];
  if (n > policy.maxDeleteCount && n > policy.maxDeleteShare * scopeSize) {
    reasons.push(
      `${n} of ${scopeSize} (${((n / Math.max(1, scopeSize)) * 100).toFixed(1)}%), over the guard of ` +
        `${(policy.maxDeleteShare * 100).toFixed(0)}% and ${policy.maxDeleteCount} records`,
    );
  }
  for (const e of emptied) reasons.push(`${e.key} ${what} where ${e.n} were stored (a scope emptied: at least ${policy.emptyScopeMin})`);
  return reasons.length > 0 ? reasons.join("; ") : undefined;
}

/** Current records of a resource that this run's walk did not see. */
function candidates(db: Database, resource: WalkedResource): Candidate[] {
  const extra =
    resource === "claims"
      ? `, v.serviceDateFrom AS serviceDate, v.memberId,
         EXISTS (SELECT 1 FROM _suspects s WHERE s.resource = 'claims' AND s.id = v.id) AS suspect`
      : "";
  const rows = db
    .prepare(
      `SELECT v.id, v.part${extra} FROM _${resource}_v v
       WHERE v.valid_to_run IS NULL AND v.id NOT IN (${seenIdsSql(resource)})`,
    )
    .all(resource) as { id: string; part: string | null; serviceDate?: string | null; memberId?: string | null; suspect?: number }[];
  if (resource === "claims") return rows.map(({ suspect, ...r }) => ({ ...r, suspect: suspect === 1 }));
  if (resource !== "members") return rows as Candidate[];
  const groupsOf = db.prepare(
    "SELECT DISTINCT groupId FROM _coverages_v WHERE part = ? AND valid_to_run IS NULL",
  ).pluck();
  return (rows as Candidate[]).map((r) => ({ ...r, groups: (groupsOf.all(r.id) as (string | null)[]).filter((g): g is string => g !== null) }));
}

/**
 * Claims the walk would prove gone by their stored service date alone, and the suspects (see
 * `_suspects`) it did not read: before they are deleted, the sync looks them up by member (a claim
 * whose date moved out of the window is still there).
 */
export function claimsToVerify(db: Database, run: ActiveRun, checkpoints: Checkpoints, seen: SeenIds): { memberId: string | null; ids: string[] }[] {
  const scopes = [...run.scopes.values()].filter((s) => s.resource === "claims");
  const completeKeys = checkpoints.complete(run.runId);
  const complete = scopes.filter((s) => completeKeys.has(s.key));
  if (complete.length === 0 || run.fresh.has("claims")) return [];
  // As in planDeletes: with nothing quarantined, as many distinct seen as current means none is missing.
  const quarantined = scopes.some((sc) => (run.quarantinedByScope.get(sc.key) ?? 0) > 0);
  const current = db.prepare("SELECT COUNT(*) FROM _claims_v WHERE valid_to_run IS NULL").pluck().get() as number;
  if (!quarantined && noneMissing(seen, "claims", seen.count("claims"), current)) return [];
  const byMember = new Map<string | null, string[]>();
  for (const c of candidates(db, "claims")) {
    if (!windowMissed(c, complete, scopes) && !c.suspect) continue;
    const m = c.memberId ?? null;
    byMember.set(m, [...(byMember.get(m) ?? []), c.id]);
  }
  return [...byMember].map(([memberId, ids]) => ({ memberId, ids }));
}
