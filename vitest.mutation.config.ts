import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

/**
 * The tests a mutation run (stryker.config.mjs) uses to judge the rule modules: the unit and
 * in-process integration tests that import them. Tests that run the built CLI or a child process
 * are left out: a mutant lives only in the test's own process, so they could never kill one. So
 * are the slow tests of other parts (the property tests of the diff, the CSV writer, the sandbox):
 * each mutant reruns every test that reaches it.
 */
export default defineConfig({
  test: {
    ...base.test,
    include: [
      "test/unit/pii/*.test.ts",
      "test/unit/store/*.test.ts",
      "test/unit/sinks/ledger.test.ts",
      "test/unit/sinks/csv-pii.test.ts",
      "test/integration/reports/reconcile-*.test.ts",
      "test/integration/cli/runs-lease.test.ts",
      "test/**/*.mutation-kill.test.ts",
    ],
    // Every mutant reruns its tests on a loaded machine: a slow test is not a failed one.
    testTimeout: 120_000,
  },
});
