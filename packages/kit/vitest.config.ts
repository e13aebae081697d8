import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "kit",
    include: ["src/**/*.spec.ts", "test/**/*.spec.ts"],
    testTimeout: 20_000,
  },
});
