import { defineConfig } from "vitest/config";

// One projects config: each workspace package has its own vitest.config.ts, so
// `npx vitest run` here runs everything and turbo can run one package at a time.
export default defineConfig({
  test: {
    projects: ["packages/*", "services/*", "apps/*", "tests"],
  },
});
