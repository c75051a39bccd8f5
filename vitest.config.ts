import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests start servers and SQLite files; two cores are shared by the whole suite.
    pool: "forks",
    maxWorkers: 2,
  },
});
