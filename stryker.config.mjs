// Mutation testing of the rule modules (`npm run test:mutation`): how many one-token wrong changes
// to each rule the tests catch. Slow, so not part of `npm test` or CI; see README, "Testing".
/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  vitest: { configFile: "vitest.mutation.config.ts" },
  mutate: [
    "src/store/walk/delete-plan.ts",
    "src/store/walk/seen-ids.ts",
    "src/pii/ssn-key.ts",
    "src/store/pii/pii.ts",
    "src/store/walk/canonical.ts",
    "src/store/runs/run-lease.ts",
    "src/sinks/ledger.ts",
    "src/reports/claims.ts",
    "src/reports/membership.ts",
    "src/webhooks/verify.ts",
  ],
  coverageAnalysis: "perTest",
  // Two cores shared with everything else on the machine.
  concurrency: 1,
  // The sandbox SQLite files and servers are slow under load: a mutant is a timeout only well past its dry-run time.
  timeoutMS: 30_000,
  dryRunTimeoutMinutes: 20,
  incremental: true,
  incrementalFile: "reports/mutation/stryker-incremental.json",
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  // Anchored: a bare "reports" would also drop src/reports.
  ignorePatterns: ["/dist", "/reports", "/out", "/demo-out", "/coverage", "/benefits-sync-demo"],
  thresholds: { high: 90, low: 85, break: 85 },
  tempDirName: ".stryker-tmp",
};
