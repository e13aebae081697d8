// `lean-grpo config [KEY]`: what a config key takes, its default, who reads it and what it
// means, from the schemas themselves (config-reference/); KEY may be a group ("training",
// "inference.vllm") to list every key under it. Starts no server.
import type { Command } from "commander";
import type { ConfigKeyDoc } from "../config-reference/config-reference.js";

const WIDTH = 100;

function wrap(text: string, indent: string): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/u).filter(Boolean)) {
    if (line && indent.length + line.length + 1 + word.length > WIDTH) {
      lines.push(indent + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(indent + line);
  return lines;
}

export function formatConfigKey(k: ConfigKeyDoc): string {
  const out = [`${k.key}  (${k.owner})`];
  out.push(`    type: ${k.type}${k.default === undefined ? "" : `    default: ${k.default}`}`);
  if (k.aliases.length > 0) out.push(`    also accepted as: ${k.aliases.join(", ")}`);
  if (k.spellings.length > 0) out.push(`    spelled: ${k.spellings.join("; ")}`);
  out.push(...wrap(k.meaning, "    "));
  return out.join("\n");
}

/** The text `lean-grpo config [KEY]` prints; throws naming the key and the groups when nothing matches. */
export async function configText(query?: string): Promise<string> {
  // Loaded on use: reading the schemas' comments brings in the TypeScript parser, which no other command needs.
  const { configReference, findConfigKeys } = await import("../config-reference/config-reference.js");
  const groups = configReference();
  if (!query)
    return groups.map((g) => [`== ${g.title}`, ...g.keys.filter((k) => !k.section).map(formatConfigKey)].join("\n\n")).join("\n\n");
  const found = findConfigKeys(groups, query);
  // A group prints its keys; a section with no keys of its own (a free-form map) prints itself.
  const keys = found.some((k) => !k.section) ? found.filter((k) => !k.section) : found;
  if (keys.length === 0) {
    const tops = [...new Set(groups.flatMap((g) => g.keys.map((k) => k.key.split(".")[0]!)))].sort();
    throw new Error(`no config key or group "${query}"; top-level names: ${tops.join(", ")} (and server.*, algorithm.config.*)`);
  }
  return keys.map(formatConfigKey).join("\n\n");
}

export function registerConfigCommand(program: Command): void {
  program
    .command("config [key]")
    .description("what a config key (or every key of a group) takes, its default, who reads it and what it means")
    .action(async (key: string | undefined) => {
      try {
        process.stdout.write(`${await configText(key)}\n`);
      } catch (error) {
        process.stderr.write(`lean-grpo: ${(error as Error).message}\n`);
        process.exitCode = 2;
      }
    });
}
