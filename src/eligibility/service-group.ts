/**
 * The group as the service has it now, for `census apply`: the group listing (its policy id and
 * planIds, as the spec's rule 3 says) and the members of each plan. Each member's SSN becomes its
 * token at once and the plain value is dropped with the rest of the record.
 */
import type { ServiceClient } from "../api/client.js";
import { UsageError } from "../input-errors.js";
import { groupMember, plainSsnToken, type GroupMember, type GroupView } from "./group-people.js";

/** The slice of the client the census reads with. */
export type GroupReader = Pick<ServiceClient, "listGroups" | "listMembers">;

/** The group `group` (its number or policy id) from `GET /v2/groups`: its policy id and planIds. */
export async function findServiceGroup(client: GroupReader, group: string): Promise<{ groupPolicyId: string; groupNumber: string | null; plans: string[] }> {
  const found: { groupPolicyId: string; groupNumber: string | null; plans: string[] }[] = [];
  for await (const g of client.listGroups()) {
    if (g.id === group || g.groupId === group) found.push({ groupPolicyId: g.id, groupNumber: g.groupId ?? null, plans: (g.plans ?? []).map((p) => p.id) });
  }
  if (found.length === 0) throw new UsageError([`--group: the service lists no group ${JSON.stringify(group)} (by group number or policy id)`]);
  if (found.length > 1) throw new UsageError([`--group: ${JSON.stringify(group)} names ${found.length} groups (${found.map((g) => g.groupPolicyId).join(", ")}); give the group policy id`]);
  return found[0]!;
}

/**
 * The members with a coverage in the group, from `GET /v2/members?planId=...` for each of its plans.
 *
 * @example const view = await readServiceGroup(client, await findServiceGroup(client, "G-1001"), key);
 */
export async function readServiceGroup(client: GroupReader, group: { groupPolicyId: string; groupNumber: string | null; plans: string[] }, key: Buffer): Promise<GroupView> {
  const members = new Map<string, GroupMember>();
  const tokenOf = (m: Record<string, unknown>) => plainSsnToken(m.ssn, key);
  for (const planId of group.plans) {
    for await (const m of client.listMembers({ planId })) {
      const gm = groupMember(m, group.groupPolicyId, tokenOf);
      if (gm) members.set(gm.memberId, gm);
    }
  }
  return { ...group, members: [...members.values()] };
}
