import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "mesh",
    include: ["**/*.spec.ts"],
    exclude: ["node_modules/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
