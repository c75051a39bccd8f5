/** The consistency checks of the reconciliation report, by their names in every output. */
export const CheckNames = [
  "claim_outside_coverage",
  "claim_member_not_covered_in_group",
  "coverage_plan_not_in_group",
  "member_of_terminated_group",
  "overlapping_coverages",
  "claim_amount_not_decimal",
] as const;
export type CheckName = (typeof CheckNames)[number];

/** What each check means, for the summary and the HTML page. */
export const CheckTitles: Record<CheckName, string> = {
  claim_outside_coverage: "Claims whose service dates fall outside the member's coverage in the claim's group",
  claim_member_not_covered_in_group: "Claims of members with no coverage in the claim's group",
  coverage_plan_not_in_group: "Coverages on a plan the group does not have",
  member_of_terminated_group: "Coverages not terminated in a group whose plan year ended",
  overlapping_coverages: "Overlapping coverages of one member on one plan",
  claim_amount_not_decimal: "Claims with an amount that is not a decimal with at most two places (left out of the sums)",
};
