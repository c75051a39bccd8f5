/**
 * `benefits-sync groups create FILE`: onboard a group from a JSON or YAML file (onboarding/group-file.ts):
 * check its references against the plan designs (nothing sent on a problem), create the group
 * unless the listing already has it, enroll the file's members with initial-enrollment (spec rule
 * 2), then its subscribers with add-subscriber. Against production it asks for `--yes`. Exit 0 when
 * the group exists and everyone is enrolled, 1 when a write failed or its outcome is unknown (each
 * says why), 2 for a bad file or usage.
 */
import { resolve } from "node:path";
import { clientOptionsFromConfig } from "../../api/client-tuning.js";
import { resolveService } from "../../config/index.js";
import { InputFileError, UsageError } from "../../input-errors.js";
import type { HouseholdOutcome } from "../../eligibility/enroll-subscribers.js";
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";
import { requireYesForProduction } from "../production.js";

export async function run(ctx: CommandContext): Promise<number> {
  const file = String(ctx.options.file);
  const { readGroupFile } = await import("../../onboarding/group-file.js");
  const content = readGroupFile(resolve(ctx.cwd, file), file);
  const config = ctx.config();
  const target = resolveService(config);
  if (target.kind !== "remote") {
    throw new UsageError(["--env sandbox: groups create needs a service that outlives the command; start one with `benefits-sync sandbox` and set BENEFITS_BASE_URL and BENEFITS_API_KEY"]);
  }
  requireYesForProduction(config, target, ctx.options.yes, "groups create");
  const { createClient } = await import("../../api/client.js");
  const { checkReferences, createGroupOnce } = await import("../../onboarding/create-group.js");
  const { enrollHouseholds } = await import("../../eligibility/enroll-subscribers.js");
  const { enrollInitialMembers } = await import("../../onboarding/initial-enrollment.js");
  const client = createClient({ ...clientOptionsFromConfig(config), baseUrl: target.baseUrl, apiKey: target.apiKey });
  try {
    const refs = await checkReferences(client, content.group);
    if (refs.problems.length) throw new InputFileError(refs.problems.map((p) => `${file}: ${p}; nothing was sent`));
    const group = await createGroupOnce(client, content.group);
    const members = await enrollInitialMembers(client, group, content.members);
    const households = await enrollHouseholds(client, group, content.subscribers);
    const totals = { members: totalsOf(members), subscribers: totalsOf(households) };
    const ok = [totals.members, totals.subscribers].every((t) => t.failed + t.unknown + t.notSent === 0);
    if (ctx.globals.json) {
      ctx.stdout.write(`${JSON.stringify({ group, unchecked: refs.unchecked, ...totals, memberOutcomes: members, households })}\n`);
    } else if (!ctx.globals.quiet || !ok) {
      const how = group.how === "found" ? "already there (an earlier run created it)" : group.answer === "lost" ? "created (its answer was lost; the listing shows it)" : "created";
      ctx.stdout.write(`group ${group.groupId}: ${how}; groupPolicyId ${group.groupPolicyId}, plan ${group.planId}\n`);
      if (refs.unchecked.length) ctx.stdout.write(`  not checked before sending (the plan design does not list them): ${refs.unchecked.join(", ")}\n`);
      for (const [key, outcomes] of [["members", members], ["subscribers", households]] as const) {
        if (outcomes.length === 0) continue;
        const t = totals[key];
        ctx.stdout.write(`${key}: ${t.enrolled} enrolled, ${t.already} already enrolled, ${t.failed} failed, ${t.unknown} unknown, ${t.notSent} not sent\n`);
        for (const h of outcomes.filter((x) => x.status !== "enrolled" && x.status !== "already")) {
          ctx.stdout.write(`  ${key}[${h.index}]: ${h.status}${h.enrollmentRequestId ? ` (enrollment request ${h.enrollmentRequestId})` : ""}: ${h.reason ?? ""}\n`);
        }
      }
    }
    return ok ? ExitCode.OK : ExitCode.RUN_FAILED;
  } finally {
    await client.close();
  }
}

function totalsOf(outcomes: readonly HouseholdOutcome[]) {
  const count = (s: HouseholdOutcome["status"]) => outcomes.filter((h) => h.status === s).length;
  return { enrolled: count("enrolled"), already: count("already"), failed: count("failed"), unknown: count("unknown"), notSent: count("not sent") };
}
