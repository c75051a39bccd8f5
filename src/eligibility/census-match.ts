/**
 * Which member a census row is, by the demographics the spec suggests: the SSN token first, then
 * the name and the date of birth to confirm it. Never by plain SSN, and never a guess: a row whose
 * evidence disagrees is reported, not matched.
 */
import type { GroupMember } from "./group-people.js";
import type { CensusRow } from "./read-census.js";

export type RowMatch =
  | { readonly kind: "member"; readonly member: GroupMember; readonly sameName: boolean; readonly sameBirth: boolean }
  | { readonly kind: "new" }
  | { readonly kind: "unmatched"; readonly reason: string };

/** Names compare without case, outer spaces or doubled inner spaces. */
const norm = (s: string | null | undefined): string => (s ?? "").trim().replace(/\s+/g, " ").toLowerCase();
export const sameText = (a: string | null | undefined, b: string | null | undefined): boolean => norm(a) === norm(b);

/** An index of the group's members by SSN token and by name with date of birth. */
export class MemberIndex {
  private readonly byToken = new Map<string, GroupMember[]>();
  private readonly byNameBirth = new Map<string, GroupMember[]>();

  constructor(members: readonly GroupMember[]) {
    for (const m of members) {
      if (m.ssnToken) push(this.byToken, m.ssnToken, m);
      push(this.byNameBirth, nameBirthKey(m.firstName, m.lastName, m.dateOfBirth), m);
    }
  }

  /**
   * Match one row.
   *
   * @example new MemberIndex(view.members).match(row) // { kind: "member", member, sameName: true, sameBirth: true }
   */
  match(row: CensusRow): RowMatch {
    const byToken = this.byToken.get(row.ssnToken) ?? [];
    if (byToken.length > 1) return { kind: "unmatched", reason: `${byToken.length} members of the group have this SSN (${byToken.map((m) => m.memberId).join(", ")}): the service operator must resolve it` };
    const [m] = byToken;
    if (m) {
      const sameName = sameText(m.firstName, row.first_name) && sameText(m.lastName, row.last_name);
      const sameBirth = m.dateOfBirth === row.date_of_birth;
      if (!sameName && !sameBirth) return { kind: "unmatched", reason: `the SSN is member ${m.memberId}'s, but neither the name nor the date of birth agrees: check the row (census changes one of them at a time)` };
      return { kind: "member", member: m, sameName, sameBirth };
    }
    const others = this.byNameBirth.get(nameBirthKey(row.first_name, row.last_name, row.date_of_birth)) ?? [];
    if (others.length > 0) return { kind: "unmatched", reason: `member ${others.map((o) => o.memberId).join(", ")} has this name and date of birth but another SSN: check the SSN (census never changes an SSN)` };
    return { kind: "new" };
  }
}

function nameBirthKey(first: string | null, last: string | null, birth: string | null): string {
  return JSON.stringify([norm(first), norm(last), birth ?? ""]);
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
