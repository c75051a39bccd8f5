import type { WalkedResource } from "../store/schema/resources.js";
import { scopeOf, type Scope } from "../store/walk/scopes.js";

export interface ClaimsWindow {
  readonly from: string;
  readonly to: string;
}

/** The group numbers to fan member and claim walks out over, in the service's order. */
export function groupNumbers(groups: readonly unknown[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const g of groups) {
    if (g === null || typeof g !== "object") continue;
    const rec = g as Record<string, unknown>;
    // The listing filters take the group number; fall back to the policy id if a group has none.
    const n = typeof rec.groupId === "string" && rec.groupId ? rec.groupId : typeof rec.id === "string" ? rec.id : undefined;
    if (n && !seen.has(n)) {
      seen.add(n);
      out.push(n);
    }
  }
  return out;
}

/** One scope per group for members; one per group over the window for claims. */
export function fanOutScopes(resource: Extract<WalkedResource, "members" | "claims">, groups: readonly string[], window: ClaimsWindow): Scope[] {
  return groups.map((g) =>
    resource === "members" ? scopeOf("members", { groupId: g }) : scopeOf("claims", { groupId: g, from: window.from, to: window.to }),
  );
}

/**
 * The scope that looks one member up by id before it is recorded deleted. Like every scope whose
 * filters name `id` or `confirm`, it is a lookup: it proves nothing complete about a group.
 */
export function memberLookupScope(id: string): Scope {
  return scopeOf("members", { id });
}

/**
 * The scope that reads a listing again to confirm that children (coverages of a group's members,
 * plans of the groups) are really gone: a child that moved, mid-walk, to a parent read before the
 * move is found there. Members it lists are applied again, whoever saw them first.
 */
export function confirmScope(resource: "members" | "groups", groupId?: string): Scope {
  return scopeOf(resource, { confirm: "1", ...(groupId !== undefined ? { groupId } : {}) });
}

/** The filters the client sends for a scope (claims' window names are mapped by the client). */
export function requestFilters(scope: Scope): Record<string, string | undefined> {
  if (scope.resource !== "claims") {
    const { confirm: _confirm, id: _id, ...rest } = scope.filters;
    return rest;
  }
  return { groupId: scope.filters.groupId, memberId: scope.filters.memberId, serviceDateFrom: scope.filters.from, serviceDateTo: scope.filters.to };
}

/** The scope that looks up one member's claims, whatever their dates (see `windowMissed`). */
export function memberClaimsScope(memberId: string): Scope {
  return scopeOf("claims", { memberId });
}

/** `YYYY-MM-DD` of a date, in UTC. */
export function isoDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** The rolling claims window ending today: the nightly job's default lookback. */
export function rollingWindow(today: Date, lookbackDays: number): ClaimsWindow {
  const from = new Date(today.getTime() - lookbackDays * 86_400_000);
  return { from: isoDay(from), to: isoDay(today) };
}
