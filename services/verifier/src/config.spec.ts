import { describe, expect, it } from "vitest";
import { availableParallelism } from "node:os";
import { ConfigError, loadConfig } from "@lean-grpo/kit";
import { VerifierConfigSchema } from "./config.js";

describe("VerifierConfigSchema", () => {
  it("has defaults that start without a REPL and with a pool of cores - 1", () => {
    const config = loadConfig(VerifierConfigSchema, {});
    expect(config.server.port).toBe(50052);
    expect(config.repl.command).toEqual([]);
    expect(config.repl.pool_size).toBe(Math.max(1, availableParallelism() - 1));
    // Lean runs under bubblewrap unless the operator says otherwise; the caps then default per mode (sandbox.ts).
    expect(config.repl.sandbox).toEqual({ mode: "bwrap", network: "isolate", read_only: [], writable: [], limits: { file_size_mb: 1024 } });
    expect(config.metrics).toEqual({ host: "127.0.0.1" });
  });

  it("reads the REPL from overrides and the environment", () => {
    const config = loadConfig(VerifierConfigSchema, {
      env: { LEANGRPO_VERIFIER_REPL__CWD: "/opt/mathlib4", LEANGRPO_VERIFIER_REPL__POOL_SIZE: "6" },
      envPrefix: "LEANGRPO_VERIFIER_",
      overrides: ["repl.command=[lake, env, /opt/repl/.lake/build/bin/repl]", "repl.warm_headers=[import Mathlib]", "metrics.port=9464"],
    });
    expect(config.repl.command).toEqual(["lake", "env", "/opt/repl/.lake/build/bin/repl"]);
    expect(config.repl.cwd).toBe("/opt/mathlib4");
    expect(config.repl.pool_size).toBe(6);
    expect(config.repl.warm_headers).toEqual(["import Mathlib"]);
    expect(config.metrics.port).toBe(9464);
  });

  it("names an unknown key and a bad value with what is accepted", () => {
    expect(() => loadConfig(VerifierConfigSchema, { overrides: ["repl.pool=4"] })).toThrow(ConfigError);
    expect(() => loadConfig(VerifierConfigSchema, { overrides: ["repl.pool=4"] })).toThrow(
      /unknown config key "repl.pool".*accepted keys under "repl":.*pool_size/,
    );
    expect(() => loadConfig(VerifierConfigSchema, { overrides: ["repl.pool_size=0"] })).toThrow(/repl.pool_size/);
    expect(() => loadConfig(VerifierConfigSchema, { overrides: ["repl.sandbox.network=none"] })).toThrow(/repl.sandbox.network/);
  });
});
