/**
 * Creating a group as the spec's rules say: the plan design, bundle and vendor checked against
 * GET /v2/designs before anything is sent; the group listing looked at first, so that a group an
 * earlier run created is found rather than created twice; POST /v2/groups; and the planId read from
 * the group listing. A create whose answer was lost is never sent again blindly: the listing is
 * looked at, and only what it shows is believed.
 */
import type { CreateGroupBody } from "../../schemas/writes.js";
import type { Design } from "../../schemas/design.js";
import type { Group } from "../../schemas/group.js";
import type { ServiceClient } from "../api/client.js";
import { answerLost } from "../api/lost-answer.js";
import type { AnswerSeen } from "../api/write-answers.js";
import { OutcomeUnknownError } from "../errors.js";
import { shownGroupField } from "./shown-fields.js";

export interface GroupReady {
  readonly groupPolicyId: string;
  /** The group number. */
  readonly groupId: string;
  /** The plan made from the plan design, read from the group listing (spec rule 3). */
  readonly planId: string;
  /** `created`: by this call; `found`: an earlier run had created it (the listing shows it). */
  readonly how: "created" | "found";
  /** What the create's answer looked like; `lost` when it never came and the listing was looked at. */
  readonly answer: AnswerSeen | "lost" | undefined;
}

/** The ids a design's configuration lists under `key` (`vendorIds: [..]` or `vendors: [{id}]`). */
function listed(config: unknown, ids: string, objects: string): string[] | undefined {
  if (config === null || typeof config !== "object") return undefined;
  const c = config as Record<string, unknown>;
  if (Array.isArray(c[ids])) return (c[ids] as unknown[]).filter((x): x is string => typeof x === "string");
  if (Array.isArray(c[objects])) return (c[objects] as { id?: unknown }[]).map((x) => x?.id).filter((x): x is string => typeof x === "string");
  return undefined;
}

/**
 * What in the group's references the service does not have, one problem per field naming the field
 * and the value. The bundle and vendor are checked against the chosen design's configuration when it
 * lists them (the spec has no endpoint for bundles or vendors); `unchecked` names those it could not.
 *
 * @example
 * await checkReferences(client, body) // { problems: ['vendorId: "v-9" is not a vendor of plan design "pd-1" ...'], unchecked: [] }
 */
export async function checkReferences(client: ServiceClient, body: CreateGroupBody): Promise<{ problems: string[]; unchecked: string[] }> {
  const designs: Design[] = [];
  for await (const d of client.listDesigns()) designs.push(d);
  const design = designs.find((d) => d.id === body.planDesignId);
  if (!design) {
    const some = designs.slice(0, 5).map((d) => d.id).join(", ");
    return { problems: [`planDesignId: ${shownGroupField(body, "planDesignId")} is not a plan design of the service (GET /v2/designs lists ${designs.length}${some ? `: ${some}${designs.length > 5 ? ", ..." : ""}` : ""})`], unchecked: [] };
  }
  const problems: string[] = [];
  const unchecked: string[] = [];
  for (const [field, ids, objects, what] of [
    ["benefitBundleId", "benefitBundleIds", "benefitBundles", "benefit bundle"],
    ["vendorId", "vendorIds", "vendors", "vendor"],
  ] as const) {
    const known = listed(design.configuration, ids, objects);
    if (known === undefined) unchecked.push(field);
    else if (!known.includes(body[field])) problems.push(`${field}: ${shownGroupField(body, field)} is not a ${what} of plan design ${JSON.stringify(design.id)} (it lists ${known.length}: ${known.slice(0, 5).join(", ")}${known.length > 5 ? ", ..." : ""})`);
  }
  return { problems, unchecked };
}

/** The group with this group number, when the listing has it. */
async function listedGroup(client: ServiceClient, match: (g: Group) => boolean): Promise<Group | undefined> {
  for await (const g of client.listGroups()) if (match(g)) return g;
  return undefined;
}

/** Is `g` the group this body describes (not merely one with the same group number)? */
const isOurs = (g: Group, body: CreateGroupBody): boolean =>
  g.groupId === body.groupId &&
  (g.adminEmail ?? "").toLowerCase() === body.adminEmail.toLowerCase() &&
  (g.effectiveDate ?? body.effectiveDate) === body.effectiveDate &&
  (g.terminationDate ?? body.terminationDate) === body.terminationDate;

function ready(g: Group, body: CreateGroupBody, how: GroupReady["how"], answer: GroupReady["answer"]): GroupReady {
  const plans = g.plans ?? [];
  const plan = plans.find((p) => p.basePlanDesignId === body.planDesignId) ?? plans[0];
  if (!plan) throw new OutcomeUnknownError(`group ${body.groupId} (groupPolicyId ${g.id}) is listed without a plan; the plan design's plan may still be in the making: run the same command again to look again`);
  return { groupPolicyId: g.id, groupId: body.groupId, planId: plan.id, how, answer };
}

/**
 * Create the group unless the listing already has it, and return it with its planId. The service's
 * refusals (the group number or adminEmail taken, the EIN's dates overlapping) come back as the
 * client's typed errors. A lost answer is followed by a look at the listing: found, it is created;
 * not found, an {@link OutcomeUnknownError} says so and nothing is sent again.
 */
export async function createGroupOnce(client: ServiceClient, body: CreateGroupBody): Promise<GroupReady> {
  const before = await listedGroup(client, (g) => isOurs(g, body));
  if (before) return ready(before, body, "found", undefined);
  let answer: GroupReady["answer"];
  let groupPolicyId: string | undefined;
  try {
    const created = await client.createGroup(body);
    answer = created.answer;
    groupPolicyId = created.groupPolicyId;
    // The answer may be the group with its plans; the planId still comes from the listing, as the spec says.
  } catch (err) {
    if (!answerLost(err)) throw err;
    answer = "lost";
    const after = await listedGroup(client, (g) => isOurs(g, body));
    if (after) return ready(after, body, "created", answer);
    throw new OutcomeUnknownError(
      `the answer to POST /v2/groups for group ${body.groupId} was lost (${err instanceof Error ? err.message : String(err)}), and the group listing does not show it; it was not sent again. Run the same command again: it looks first and creates the group only if it is still missing`,
      { cause: err },
    );
  }
  const g = await listedGroup(client, (x) => (groupPolicyId ? x.id === groupPolicyId : isOurs(x, body)));
  if (!g) throw new OutcomeUnknownError(`the service accepted group ${body.groupId} (${answer.status}) but its listing does not show it yet; run the same command again to look again (nothing is created twice)`);
  return ready(g, body, "created", answer);
}
