/**
 * The lookups a run makes before it deletes anything. A record that moved during the walk from a
 * part not yet read to one already read (a member to another group, a coverage to another member,
 * a plan to another group) was listed by no page, yet is alive; a claim whose service date moved
 * out of its window was not listed by the window's walk, yet is there. Each is looked for where
 * it could be now; what is found is applied (then it is seen, and not deleted).
 */
import { confirmScope, memberClaimsScope, memberLookupScope } from "../extract/scopes.js";
import type { DeleteCandidates } from "../store/walk/delete-plan.js";
import type { Scope } from "../store/walk/scopes.js";

/** Which items of a page a lookup applies. */
export type Keep = (item: Record<string, unknown>) => boolean;

/** A scope to walk and the items of it to apply. */
export interface Lookup {
  readonly scope: Scope;
  readonly keep: Keep;
}

/** Deletes are confirmed one lookup per member up to this many (more: the delete guard judges them). */
export const MAX_MEMBER_LOOKUPS = 500;
/** ...and by reading again up to this many groups' member listings. */
export const MAX_CONFIRM_LISTINGS = 50;

/**
 * The lookups that confirm a run's deletes: each member by id (a 404 proves it gone), the member
 * listings of the groups whose coverages went (the members listing one of them), the groups
 * listing when plans went (the groups listing one of them).
 *
 * @example deleteConfirmations({ members: ["m1"], coverages: [], plans: [] }, true) // [{ scope: members?id=m1, ... }]
 */
export function deleteConfirmations(c: DeleteCandidates, canLookUpMembers: boolean, idFields: { members: string; groups: string } = { members: "id", groups: "id" }): Lookup[] {
  const out: Lookup[] = [];
  if (canLookUpMembers && c.members.length <= MAX_MEMBER_LOOKUPS) {
    for (const id of c.members) out.push({ scope: memberLookupScope(id), keep: () => true });
  }
  const coveragesByGroup = new Map<string, Set<string>>();
  for (const cov of c.coverages) if (cov.groupId !== null) coveragesByGroup.set(cov.groupId, (coveragesByGroup.get(cov.groupId) ?? new Set()).add(cov.id));
  if (coveragesByGroup.size <= MAX_CONFIRM_LISTINGS) {
    for (const [groupId, ids] of coveragesByGroup) out.push({ scope: confirmScope("members", groupId), keep: orUnreadable(idFields.members, listsAnyOf("coverages", ids)) });
  }
  if (c.plans.length > 0) out.push({ scope: confirmScope("groups"), keep: orUnreadable(idFields.groups, listsAnyOf("plans", new Set(c.plans))) });
  return out;
}

/**
 * The lookups of claims by member: only the claims asked about are applied, and the items without
 * a usable id (they are quarantined, so the lookup is incomplete and proves no claim gone: the
 * unreadable one may be the claim asked about).
 */
export function claimLookups(toVerify: readonly { memberId: string | null; ids: readonly string[] }[], idField: string): Lookup[] {
  return toVerify
    .filter((v): v is { memberId: string; ids: readonly string[] } => v.memberId !== null)
    .map((v) => {
      const ids = new Set(v.ids);
      return { scope: memberClaimsScope(v.memberId), keep: orUnreadable(idField, (item) => ids.has(item[idField] as string)) };
    });
}

/**
 * `keep`, and every item without a usable id: those must reach the store, which quarantines them
 * (the scope is then incomplete), rather than be dropped as "not asked about".
 */
function orUnreadable(idField: string, keep: Keep): Keep {
  return (item) => {
    const id = item[idField];
    return typeof id !== "string" || id === "" || keep(item);
  };
}

/** Items whose child list (`coverages`, `plans`) names one of `ids`. */
function listsAnyOf(field: string, ids: ReadonlySet<string>): Keep {
  return (item) => Array.isArray(item[field]) && (item[field] as unknown[]).some((c) => c !== null && typeof c === "object" && ids.has((c as { id?: string }).id ?? ""));
}
