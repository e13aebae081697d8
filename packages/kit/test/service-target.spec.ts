import { describe, expect, it } from "vitest";
import { clientTarget, ServiceTargetSchema } from "../src/index.js";

describe("service targets", () => {
  it("accepts http(s) URLs, dns:///host:port and dns+https:///host:port, and names the forms otherwise", () => {
    for (const ok of ["http://127.0.0.1:50052", "https://verifier.example:443", "dns:///verifier:50052", "dns+https:///verifier:50052"]) {
      expect(ServiceTargetSchema.safeParse(ok).success).toBe(true);
    }
    for (const bad of ["verifier:50052", "dns:///verifier", "grpc://x:1", "dns+http:///verifier:1", "https+dns:///verifier:1", ""]) {
      const result = ServiceTargetSchema.safeParse(bad);
      expect(result.success).toBe(false);
      expect(result.error?.issues[0]?.message).toBe("expected an http(s):// URL, dns:///host:port or dns+https:///host:port (TLS)");
    }
  });

  it("turns a dns:/// name into a resolving target and URLs into endpoints", () => {
    expect(clientTarget("dns:///reward:50053")).toEqual({ target: "dns:///reward:50053" });
    expect(clientTarget("dns+https:///reward:50053")).toEqual({ target: "dns+https:///reward:50053" });
    expect(clientTarget("http://a:1")).toEqual({ endpoints: ["http://a:1"] });
    expect(clientTarget(["http://a:1", "http://b:2"])).toEqual({ endpoints: ["http://a:1", "http://b:2"] });
    expect(() => clientTarget(["dns:///reward:50053", "http://b:2"])).toThrow(/names every replica by itself/);
  });
});
