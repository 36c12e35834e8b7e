import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    environment: "jsdom",
    include: ["test/**/*.test.js"],
    benchmark: { include: ["bench/**/*.bench.js"] },
    testTimeout: 10000,
    restoreMocks: true,
  },
});
