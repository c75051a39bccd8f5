/**
 * `guard-too-strict`: a run the delete guard stopped must really have been about to delete more
 * than the policy allows. The truth comes from the model and from what the server served, not
 * from the product's delete plan: per resource, the most records the run could rightly delete
 * are those the snapshot held (after the stop put it back) that the service lacked at some moment
 * of the run's walk (from the start of its resumed chain to its end). The policy (README, the
 * delete guard): a resource's deletes are refused when they are more than `maxDeleteCount` and
 * more than `maxDeleteShare` of its scope; a parent's scope is what the walk saw plus what it
 * proves gone, a child's the children held. A walked scope that lists nothing while 5 or more of
 * its records would go is refused whatever the share. If even that most is allowed for every
 * resource, the guard stopped a run it should have let through.
 */
import type { Database } from "better-sqlite3";
import { chainStart, type RunRecord, type Violation } from "./invariants.js";
import type { ServiceModel, TrackedResource } from "./model.js";

const Resources: readonly TrackedResource[] = ["designs", "groups", "plans", "members", "coverages", "claims"];
/** The guard's default for an emptied scope (the sim sets no other). */
const EMPTY_SCOPE_MIN = 5;

export function checkGuardStop(
  db: Database,
  model: ServiceModel,
  runs: readonly RunRecord[],
  stopped: RunRecord,
  policy: { readonly maxDeleteShare: number; readonly maxDeleteCount: number },
): Violation[] {
  if (stopped.allowDeletes || stopped.runId === null || !stopped.error?.startsWith("DELETE_GUARD")) return [];
  const start = chainStart(db, stopped.runId);
  const chain = runs.filter((r) => r.runId !== null && r.runId >= start && r.runId <= stopped.runId!);
  const from = chain[0]?.startTick ?? stopped.startTick;
  const share = policy.maxDeleteShare;
  const lines: string[] = [];
  for (const r of Resources) {
    const held = db.prepare(`SELECT id FROM ${r}`).pluck().all() as string[];
    const gone = held.filter((id) => !model.presentThroughout(r, id, from, stopped.endTick));
    const n = gone.length;
    const child = r === "plans" || r === "coverages";
    // At least the scope: a child's, every child held; a parent's, those the walk was served that were there all along.
    const goneSet = new Set(gone);
    const seen = child ? held.length : held.filter((id) => !goneSet.has(id) && chain.some((c) => c.served.has(`${r}:${id}`))).length;
    const withinShare = child ? n <= share * seen : n * (1 - share) <= share * seen;
    const allowed = n <= policy.maxDeleteCount || (withinShare && n < EMPTY_SCOPE_MIN);
    if (!allowed) return []; // this resource may well justify the stop
    lines.push(`${r} at most ${n} gone of ${held.length} held (${seen} seen)`);
  }
  return [
    {
      kind: "guard-too-strict",
      message: `run ${stopped.runId} was stopped by the delete guard (${(stopped.error ?? "").slice(0, 200)}), but the service lacked too few records for that: ${lines.join("; ")}`,
    },
  ];
}
