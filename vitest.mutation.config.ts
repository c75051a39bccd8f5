import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

/**
 * The tests a mutation run (stryker.config.mjs) uses to judge the rule modules: the direct tests of
 * those rules (`*.mutation-kill.test.ts`) and the fast unit tests of the same rules. Tests that run
 * the built CLI or a child process are left out (a mutant lives only in the test's own process, so
 * they could never kill one), and so are the slow ones: every mutant reruns each test that reaches
 * it, and a sync-heavy set measured about 30 s a mutant on this machine (hours for the modules).
 */
export default defineConfig({
  test: {
    ...base.test,
    include: [
      "test/**/*.mutation-kill.test.ts",
      "test/unit/pii/*.test.ts",
      "test/unit/store/pii-key*.test.ts",
      "test/unit/store/ssn-scrub.test.ts",
      "test/unit/store/sync-engine.test.ts",
      "test/unit/webhooks/verify.test.ts",
    ],
    // None of these needs the build (the CLI's sync, for one, runs its store on a built worker).
    globalSetup: [],
    // Every mutant reruns its tests on a loaded machine: a slow test is not a failed one.
    testTimeout: 120_000,
  },
});
