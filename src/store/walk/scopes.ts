import type { WalkedResource } from "../schema/resources.js";

/**
 * A scope is a resource plus its filters: what one complete walk proves. A claims window deletes
 * only claims inside that window; a members walk of one group deletes only that group's members.
 */
export interface Scope {
  readonly key: string;
  readonly resource: WalkedResource;
  readonly filters: Readonly<Record<string, string>>;
}

/** Build a scope; its key is stable for the same resource and filters (used by checkpoints). */
export function scopeOf(resource: WalkedResource, filters: Record<string, string | undefined> = {}): Scope {
  const clean: Record<string, string> = {};
  for (const k of Object.keys(filters).sort()) {
    const v = filters[k];
    if (v !== undefined) clean[k] = v;
  }
  const qs = Object.entries(clean).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&");
  return { key: qs ? `${resource}?${qs}` : resource, resource, filters: clean };
}

/**
 * A scope that looks records up (by id, again to confirm, a member's claims) rather than walking a
 * listing whole: it applies only what it asks about, so it answers for the run and the question
 * that read it, and is read again from its start whenever it is begun (see SnapshotStore.beginScope).
 */
export function isLookup(s: Scope): boolean {
  return s.filters.id !== undefined || s.filters.confirm !== undefined || (s.resource === "claims" && s.filters.memberId !== undefined);
}

/** What the store knows of a record that a run did not see, to decide whether a scope proves it gone. */
export interface Candidate {
  readonly id: string;
  readonly part: string | null;
  /** For claims: the service date the window filters on, and the member (to look the claim up by). */
  readonly serviceDate?: string | null;
  readonly memberId?: string | null;
  /** For claims: a failed run read it and did not keep what it read (see `_suspects`). */
  readonly suspect?: boolean;
  /** For members: the group numbers of its current coverages. */
  readonly groups?: readonly string[];
}

/**
 * Whether the complete scopes of a run prove that `c` is gone. Designs and groups: the one
 * unfiltered walk. Members: every group the member had a coverage in was walked completely, or is
 * no longer listed at all (a member without coverages: every member scope was complete). Claims: a complete walk of its group over a
 * window that contains its stored service date did not list it, *and* a complete walk of its
 * member's claims (no date filter) did not either: the date may have moved out of the window, and
 * what the window's filter selects is the service's date, not the stored one. A suspect (a claim
 * a failed run read and lost) needs only the second: its date may have come back into the window
 * on the page that was lost. A claim with no member is never proven gone.
 */
export function provenAbsent(c: Candidate, complete: readonly Scope[], all: readonly Scope[]): boolean {
  if (complete.length === 0) return false;
  const resource = complete[0]!.resource;
  if (resource === "designs" || resource === "groups") return complete.some((s) => Object.keys(s.filters).length === 0);
  if (resource === "members") {
    const walked = new Set(complete.map((s) => s.filters.groupId));
    // The run fans out over every group the service lists: a group it has no scope for is gone
    // from the listing, so it lists no member either (the member is still looked up by id).
    const planned = new Set(all.map((s) => s.filters.groupId));
    if (!c.groups || c.groups.length === 0) return complete.length === all.length;
    return c.groups.every((g) => walked.has(g) || !planned.has(g));
  }
  return (windowMissed(c, complete, all) || c.suspect === true) && c.memberId != null && complete.some((s) => s.filters.memberId === c.memberId);
}

/**
 * A complete walk of the claim's group over a window holding its stored service date did not list
 * it; or its group is gone from the listing (the run walked that window for the other groups, and
 * for none of the claim's group), so nothing lists it there either.
 */
export function windowMissed(c: Candidate, complete: readonly Scope[], all: readonly Scope[] = complete): boolean {
  const date = c.serviceDate;
  if (!date || c.part === null) return false;
  const holds = (s: Scope) =>
    s.filters.memberId === undefined && (s.filters.from === undefined || s.filters.from <= date) && (s.filters.to === undefined || date <= s.filters.to);
  if (complete.some((s) => holds(s) && s.filters.groupId === c.part)) return true;
  const windows = all.filter((s) => s.filters.memberId === undefined && s.filters.groupId !== undefined);
  return windows.length > 0 && !windows.some((s) => s.filters.groupId === c.part) && complete.some(holds);
}
