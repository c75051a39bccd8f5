/**
 * What a reconciliation found (the report `reconcile()` returns), and its figures as report.json
 * and `--json` give them. Its own file, below both the reconciliation that builds it
 * (reconcile.ts) and the pages that show it (render.ts), so that neither imports the other back.
 */
import type { ManifestFile } from "../sinks/files/manifest.js";
import type { CheckName } from "./check-names.js";
import type { ClaimsFigures } from "./claims.js";
import type { Finding } from "./checks.js";
import type { FindingGroup } from "./findings-by-group.js";
import type { MembershipFigures } from "./membership.js";
import type { Period } from "./periods.js";

export interface ReconcileReport {
  from: Period;
  to: Period;
  asOfDate: string;
  members: MembershipFigures["members"];
  coverages: Omit<MembershipFigures, "members" | "holds">;
  claims: ClaimsFigures;
  eligibility: { changes: number; audit: number };
  findings: Record<CheckName, number>;
  /** The first findings of each check, for the summary and the page. */
  examples: Record<CheckName, Finding[]>;
  /** The findings by group (largest first), for the summary and the page. */
  findingsByGroup: FindingGroup[];
  /** Group number to name (the sponsor's), as of B, for the summary and the page. */
  groupNames: ReadonlyMap<string, string>;
  /** A + movement = B for the members, every membership cell and every claim status. */
  arithmeticHolds: boolean;
  dir: string;
  files: ManifestFile[];
}

/**
 * The figures of `--json` and report.json: the totals, the movement and the number of findings per
 * check. The per-cell and per-group tables and the findings themselves are in the CSV files.
 */
export function reportJson(r: ReconcileReport): Record<string, unknown> {
  const { examples: _examples, findingsByGroup: _byGroup, groupNames: _names, files, coverages, claims, ...figures } = r;
  const { cells: _cells, ...coverageTotals } = coverages;
  const { byGroup: _claimsByGroup, ...claimTotals } = claims;
  return { ...figures, coverages: coverageTotals, claims: claimTotals, files: files.map((f) => f.file) };
}
