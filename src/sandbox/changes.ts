/**
 * The ground truth of a simulated day: a journal snapshots each record before its first change;
 * at the end, before and after are compared in the sync engine's terms (a member without its
 * coverages, each coverage by id; a group without its plans, each plan by id; claims whole). A record
 * is "updated" only if its JSON really differs.
 */
import { cloneRec, type ClaimRec, type GroupRec, type MemberRec } from "./records.js";
import type { MutationObserver, RecordKind, SandboxState } from "./state.js";

export const Resources = ["designs", "groups", "plans", "members", "coverages", "claims"] as const;
export type Resource = (typeof Resources)[number];

export interface ResourceChanges {
  inserted: string[];
  updated: string[];
  deleted: string[];
}

export interface ChangeSet {
  day: string;
  changes: Record<Resource, ResourceChanges>;
}

/** JSON with keys sorted at every level: equal records give equal strings. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v as Record<string, unknown>).sort()) out[k] = (v as Record<string, unknown>)[k];
      return out;
    }
    return v;
  });
}

export function emptyChangeSet(day: string): ChangeSet {
  const changes = {} as Record<Resource, ResourceChanges>;
  for (const r of Resources) changes[r] = { inserted: [], updated: [], deleted: [] };
  return { day, changes };
}

/** Split a member into the engine's records: the member without coverages, and its coverages. */
export function splitMember(m: MemberRec): { member: Omit<MemberRec, "coverages">; coverages: MemberRec["coverages"] } {
  const { coverages, ...member } = m;
  return { member, coverages };
}

export function splitGroup(g: GroupRec): { group: Omit<GroupRec, "plans">; plans: GroupRec["plans"] } {
  const { plans, ...group } = g;
  return { group, plans };
}

function classify(out: ResourceChanges, id: string, before: unknown, after: unknown): void {
  if (before === undefined && after !== undefined) out.inserted.push(id);
  else if (before !== undefined && after === undefined) out.deleted.push(id);
  else if (before !== undefined && after !== undefined && canonicalJson(before) !== canonicalJson(after)) out.updated.push(id);
}

function byId<T extends { id: string }>(items: readonly T[] | undefined): Map<string, T> {
  return new Map((items ?? []).map((x) => [x.id, x]));
}

function diffChildren<T extends { id: string }>(out: ResourceChanges, before: readonly T[] | undefined, after: readonly T[] | undefined): void {
  const b = byId(before);
  const a = byId(after);
  for (const id of new Set([...b.keys(), ...a.keys()])) classify(out, id, b.get(id), a.get(id));
}

/** Records the first "before" of every record a simulated day touches. */
export class ChangeJournal implements MutationObserver {
  private readonly members = new Map<string, MemberRec | undefined>();
  private readonly claims = new Map<string, ClaimRec | undefined>();
  private readonly groups = new Map<string, GroupRec | undefined>();

  before(kind: RecordKind, id: string, current: unknown): void {
    const map = (kind === "member" ? this.members : kind === "claim" ? this.claims : this.groups) as Map<string, unknown>;
    if (!map.has(id)) map.set(id, current === undefined ? undefined : cloneRec(current));
  }

  /** Compare every touched record with its current state. Also names the members whose full record changed. */
  finish(state: SandboxState, day: string): { changeSet: ChangeSet; changedMembers: string[] } {
    const cs = emptyChangeSet(day);
    const changedMembers: string[] = [];
    for (const [id, before] of this.members) {
      const after = state.getMember(id);
      const b = before && splitMember(before);
      const a = after && splitMember(after);
      classify(cs.changes.members, id, b?.member, a?.member);
      diffChildren(cs.changes.coverages, b?.coverages, a?.coverages);
      if (canonicalJson(before ?? null) !== canonicalJson(after ?? null)) changedMembers.push(id);
    }
    for (const [id, before] of this.groups) {
      const after = state.getGroup(id);
      const b = before && splitGroup(before);
      const a = after && splitGroup(after);
      classify(cs.changes.groups, id, b?.group, a?.group);
      diffChildren(cs.changes.plans, b?.plans, a?.plans);
    }
    for (const [id, before] of this.claims) classify(cs.changes.claims, id, before, state.getClaim(id));
    for (const r of Object.values(cs.changes)) {
      r.inserted.sort();
      r.updated.sort();
      r.deleted.sort();
    }
    return { changeSet: cs, changedMembers: changedMembers.sort() };
  }
}
