import { describe, expect, it } from "vitest";
import { z } from "zod";
import { schemaKeys } from "./schema-reference.js";

const Schema = z
  .object({
    server: z
      .object({ port: z.number().int().min(0).max(65535).default(0), host: z.string().min(1).default("127.0.0.1") })
      .strict()
      .prefault({ port: 50053 }),
    mode: z.enum(["whole", "tactic"]).default("whole"),
    cap: z.number().positive().nullable().default(null),
    auto: z.union([z.boolean(), z.literal("auto")]).default("auto"),
    names: z.array(z.string()).min(1).default(["a"]),
    weights: z.record(z.string(), z.number()).default({}),
    note: z.string().optional().describe("A note."),
  })
  .strict();

describe("schemaKeys", () => {
  const keys = Object.fromEntries(schemaKeys(Schema).map((k) => [k.path, k]));

  it("lists sections before their keys, in declaration order", () => {
    expect(Object.keys(keys)).toEqual(["server", "server.port", "server.host", "mode", "cap", "auto", "names", "weights", "note"]);
    expect(keys.server!.type).toBe("section");
    expect(keys["server.port"]!.siblings).toEqual(["port", "host"]);
  });

  it("takes a key's default from its enclosing section's default first", () => {
    expect(keys["server.port"]!.default).toBe("50053");
    expect(keys["server.host"]!.default).toBe('"127.0.0.1"');
  });

  it("describes types, bounds, choices, null and absence", () => {
    expect(keys["server.port"]!.type).toBe("integer >= 0 and <= 65535");
    expect(keys.mode).toMatchObject({ type: "one of: whole, tactic", choices: ["whole", "tactic"], default: '"whole"' });
    expect(keys.cap).toMatchObject({ type: "number > 0 | null", nullable: true, default: "null" });
    expect(keys.auto).toMatchObject({ type: "boolean | the value auto", default: '"auto"' });
    expect(keys.names!.type).toBe("list of (string) at least 1 long");
    expect(keys.weights!.type).toBe("map of string to number");
    expect(keys.note).toMatchObject({ type: "string", optional: true, description: "A note." });
    expect(keys.note!.default).toBeUndefined();
  });
});
