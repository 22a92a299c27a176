import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits for a state, it does not time one: 1 s (the default) failed a real-Chromium test while the
    // machine ran two suites at once. The bound only matters when the state never comes.
    expect: { poll: { timeout: 10_000 } },
    pool: "forks",
    globalSetup: ["test/global-setup.ts"],
  },
});
