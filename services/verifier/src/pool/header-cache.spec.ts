import { describe, expect, it } from "vitest";
import { HeaderCache } from "./header-cache.js";

describe("HeaderCache", () => {
  it("keeps the most recently used headers up to its capacity", () => {
    const cache = new HeaderCache(2);
    cache.set("import A", 0);
    cache.set("import B", 1);
    expect(cache.get("import A")).toBe(0); // A is now the most recent
    cache.set("import C", 2); // evicts B
    expect(cache.headers()).toEqual(["import A", "import C"]);
    expect(cache.has("import B")).toBe(false);
    expect(cache.get("import B")).toBeUndefined();
  });

  it("replaces the env of a header set again, and empties on clear", () => {
    const cache = new HeaderCache(1);
    cache.set("import A", 0);
    cache.set("import A", 5);
    expect(cache.get("import A")).toBe(5);
    cache.clear();
    expect(cache.headers()).toEqual([]);
  });

  it("needs room for at least one header", () => {
    expect(() => new HeaderCache(0)).toThrow(RangeError);
  });
});
