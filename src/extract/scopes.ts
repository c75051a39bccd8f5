import type { WalkedResource } from "../store/resources.js";
import { scopeOf, type Scope } from "../store/scopes.js";

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

/** The filters the client sends for a scope (claims' window names are mapped by the client). */
export function requestFilters(scope: Scope): Record<string, string | undefined> {
  if (scope.resource !== "claims") return { ...scope.filters };
  return { groupId: scope.filters.groupId, serviceDateFrom: scope.filters.from, serviceDateTo: scope.filters.to };
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
