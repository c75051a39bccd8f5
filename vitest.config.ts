import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // Hang guards, not speed bounds (speed is measured in bench/): with two suites and other work
    // on 2 cores (load average 15), 16 tests went past 30 s and failed though nothing was wrong.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // Integration tests start servers and SQLite files; two cores are shared by the whole suite.
    pool: "forks",
    maxWorkers: 2,
  },
});
