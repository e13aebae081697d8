// The one parse of a run config (StartRun's, a resumed run's config.json, Evaluate's, and a
// client's check before it starts anything): RunConfigSchema through the config loader, a bad
// key or value answered INVALID_ARGUMENT naming the key.
import { Code, ConnectError } from "@connectrpc/connect";
import { ConfigError, loadConfig } from "@lean-grpo/kit";
import { RunConfigSchema, type RunConfig } from "./run-config.js";
import { runConfigInput, type RunConfigMessage } from "./run-config-message.js";

export function parseRunConfig(json: Record<string, unknown>, overrides: readonly string[]): RunConfig {
  try {
    return loadConfig(RunConfigSchema, { flags: json, overrides });
  } catch (error) {
    if (error instanceof ConfigError) {
      // The request's config reaches the loader as its "flags": name the key alone (overrides keep their source).
      const lines = error.issues.map((issue) =>
        issue.source.startsWith("flag ") ? issue.message.replace(` (from ${issue.source})`, "") : issue.message,
      );
      throw new ConnectError(lines.join("\n"), Code.InvalidArgument);
    }
    throw error;
  }
}

/** The run config a StartRun carrying `message` would run with: defaults filled, every value checked as StartRun checks it. */
export function resolveRunConfig(message: RunConfigMessage): RunConfig {
  return parseRunConfig(runConfigInput({ runConfig: message, config: undefined }), []);
}
