import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // Hang guards, not speed bounds (speed is measured in bench/): with two suites and other work
    // on 2 cores (load average 15), 16 tests went past 30 s and failed though nothing was wrong,
    // and the slowest test file but three took 45 s. A test or hook that runs past 2 min is stuck:
    // it fails then, well inside the suite's time. The few long ones declare their own, from
    // their counts (sim.test.ts, census.test.ts, kill9.test.ts, webhooks-kill9.test.ts,
    // install.test.ts); no single wait for an event inside a test is over 60 s (test/helpers/wait.ts).
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Integration tests start servers and SQLite files; two cores are shared by the whole suite.
    pool: "forks",
    maxWorkers: 2,
  },
});
