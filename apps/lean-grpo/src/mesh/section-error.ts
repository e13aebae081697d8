// A service section of a train file (`services.<name>:`) is loaded with the service's own
// schema, where its keys have no `services.<name>.` prefix and reach the loader as flags; a
// refusal names the key as the train file writes it.
import { ConfigError } from "@lean-grpo/kit";

export function sectionConfigError(error: ConfigError, prefix: string): ConfigError {
  return new ConfigError(
    error.issues.map((issue) => {
      const path = issue.path ? `${prefix}.${issue.path}` : prefix;
      const message = issue.message
        .replace(/ \(from flag [^)]*\)/gu, "")
        .replace(/(config key|under) "([^"]*)"/gu, (_, what: string, key: string) => `${what} "${prefix}.${key}"`)
        .replace(/^config: /u, `${prefix}: `);
      return { path, source: "train config", message };
    }),
  );
}
