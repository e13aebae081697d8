// Which sandbox the service uses when the operator says nothing: a configured Lean
// REPL runs under bubblewrap, and a host where bubblewrap cannot run stops the service
// at creation with the fix in the message; without a REPL (the math-answer setup) no
// sandbox is needed and the service starts anywhere.
import { afterEach, describe, expect, it } from "vitest";
import { VerifierConfigSchema } from "../src/config.js";
import { SandboxUnavailable } from "../src/repl/sandbox.js";
import { createVerifierService } from "../src/service.js";

const savedPath = process.env.PATH;
afterEach(() => {
  process.env.PATH = savedPath;
});

describe("the default sandbox", () => {
  it("is bubblewrap for a configured REPL: without it the service refuses to start", () => {
    // No bubblewrap on this PATH: what a host without the package looks like.
    process.env.PATH = "/nonexistent";
    const config = VerifierConfigSchema.parse({ repl: { command: ["/usr/bin/env"], cwd: "/", replay: "off" } });
    expect(config.repl.sandbox.mode).toBe("bwrap");
    expect(() => createVerifierService(config, { env: {} })).toThrow(SandboxUnavailable);
    expect(() => createVerifierService(config, { env: {} })).toThrow(
      /install it \(Debian: apt-get install bubblewrap\).*or set repl\.sandbox\.mode: none/,
    );
  });

  it("is not needed without a REPL: the service starts wherever it runs", async () => {
    process.env.PATH = "/nonexistent";
    const service = createVerifierService(VerifierConfigSchema.parse({}), { env: {} });
    expect(service.pool).toBeUndefined();
    await service.close();
  });
});
