/**
 * Group names for the page and the summary: a reader knows a group by its sponsor's name, the
 * files by its group number. The name is the one the last version seen by run B carries (a group
 * deleted before B keeps its last known name).
 */
import { escapeControls } from "../control-chars.js";
import type { ReportScope } from "./as-of.js";

export function groupNames(scope: ReportScope): ReadonlyMap<string, string> {
  const names = new Map<string, string>();
  const rows = scope.db
    .prepare("SELECT groupId, sponsorName AS name FROM _groups_v WHERE valid_from_run <= ? AND groupId IS NOT NULL ORDER BY vid")
    .iterate(scope.to.runId) as Iterable<{ groupId: string; name: string | null }>;
  for (const r of rows) if (r.name) names.set(String(r.groupId), r.name);
  return names;
}

/**
 * `200001 (Acme Health Partners)`, or the id alone when the snapshot knows no name. The name is the
 * service's text: its control characters are shown escaped (`control-chars.ts`), in the summary
 * printed, summary.md and the page alike.
 */
export const groupLabel = (names: ReadonlyMap<string, string>, groupId: string): string =>
  groupId === "" ? "(no group)" : names.has(groupId) ? `${groupId} (${escapeControls(names.get(groupId)!, { lines: false })})` : groupId;
