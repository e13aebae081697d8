import { describe, expect, it } from "vitest";
import { AdapterRegistry } from "../src/adapters/adapter-registry.js";

const adapter = (name: string, version: number) => ({ name, version: BigInt(version), path: `/a/${name}`, loadedAt: new Date() });

describe("AdapterRegistry", () => {
  it("keeps the newest `keep` policy versions loaded and unloads older ones", async () => {
    const unloaded: string[] = [];
    const registry = new AdapterRegistry(2, async (name) => void unloaded.push(name));
    expect(registry.add(adapter("policy-v1", 1))).toEqual([]);
    expect(registry.add(adapter("policy-v2", 2))).toEqual([]);
    expect(registry.add(adapter("policy-v3", 3))).toEqual(["policy-v1"]);
    await Promise.resolve();
    expect(unloaded).toEqual(["policy-v1"]);
    expect(registry.list().map((a) => a.name)).toEqual(["policy-v2", "policy-v3"]);
  });

  it("an adapter under another name (an evaluation's) neither counts against `keep` nor is pushed out by new versions", () => {
    const registry = new AdapterRegistry(2, async () => {});
    registry.add(adapter("policy-v3", 3));
    registry.add(adapter("policy-v4", 4));
    expect(registry.add(adapter("eval-1a2b-policy-v4", 1))).toEqual([]);
    expect(registry.add(adapter("policy-v5", 5))).toEqual(["policy-v3"]);
    expect(registry.has("eval-1a2b-policy-v4")).toBe(true);
    expect(registry.list().map((a) => a.name)).toEqual(["eval-1a2b-policy-v4", "policy-v4", "policy-v5"]);
  });
});
