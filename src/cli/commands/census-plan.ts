/**
 * `benefits-sync census plan FILE --group G`: what applying the census would do, against the
 * snapshot. Sends nothing. Exit 0 with the plan, 2 for a file or group it cannot use.
 */
import { requireSnapshot } from "../snapshot-to-read.js";
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";

export async function run(ctx: CommandContext): Promise<number> {
  const config = ctx.config();
  const file = String(ctx.options.file);
  const group = ctx.options.group;
  if (typeof group !== "string" || group === "") {
    ctx.stderr.write("benefits-sync census plan: --group G is required (the group number or its policy id)\n");
    return ExitCode.USAGE;
  }
  const { readSnapshotGroup } = await import("../../eligibility/snapshot-group.js");
  const { loadCensus, snapshotPiiKey } = await import("../../eligibility/census-input.js");
  const { CensusFileError } = await import("../../eligibility/read-census.js");
  const { planCensus } = await import("../../eligibility/census-plan.js");
  const { planJson, planText } = await import("../../eligibility/plan-render.js");
  // No snapshot yet (no file, or an empty one) is said as such, before anything reads it.
  requireSnapshot(config.db);
  const key = snapshotPiiKey(config.db, config.piiKey);
  const view = readSnapshotGroup(config.db, group, key);
  let census;
  try {
    census = loadCensus(file, key);
  } catch (e) {
    if (!(e instanceof CensusFileError)) throw e;
    ctx.stderr.write(`benefits-sync census plan: ${e.message}\n`);
    return ExitCode.USAGE;
  }
  const plan = planCensus(census, view);
  if (ctx.globals.json) ctx.stdout.write(`${JSON.stringify({ file, rows: census.rowCount, ...planJson(plan), sent: false })}\n`);
  else ctx.stdout.write(`${planText(plan, file)}Nothing was sent (the plan compares with the snapshot; run \`benefits-sync sync\` first for a fresh one).\n`);
  return ExitCode.OK;
}
