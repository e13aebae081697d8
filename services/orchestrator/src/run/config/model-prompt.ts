// The prompt keys a run leaves unset take the served model's own: the inference service reads
// its model directory's prompt_format.json (ListModels' prompt_format), so a client of a
// running mesh (`serve all`, any language) that names no prompt samples the model as it was
// made to be read, as `lean-grpo train` does. A key the request or its overrides set is kept.
import { Code, ConnectError } from "@connectrpc/connect";
import type { ModelPromptFormat } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import type { MeshClients } from "../mesh-clients.js";
import type { RunConfig } from "./run-config.js";

type PromptKey = keyof RunConfig["prompt"];

/** Each prompt key and its field of ModelPromptFormat. */
const FIELDS: readonly [PromptKey, keyof ModelPromptFormat & string][] = [
  ["format", "format"],
  ["system", "system"],
  ["math_template", "mathTemplate"],
  ["lean_template", "leanTemplate"],
  ["tactic_template", "tacticTemplate"],
  ["feedback_template", "feedbackTemplate"],
];

/** The prompt keys the request (its YAML-shaped config and its dotted overrides) sets itself. */
export function promptKeysSet(input: Record<string, unknown>, overrides: readonly string[]): Set<PromptKey> {
  const section = input.prompt;
  const set = new Set<PromptKey>(
    section !== null && typeof section === "object"
      ? (Object.keys(section) as PromptKey[]).filter((k) => (section as Record<string, unknown>)[k] !== undefined)
      : [],
  );
  for (const override of overrides) {
    const key = /^prompt\.(\w+)=/u.exec(override)?.[1];
    if (key) set.add(key as PromptKey);
    // `prompt={...}` replaces the whole section.
    if (/^prompt=/u.test(override)) for (const [k] of FIELDS) set.add(k);
  }
  return set;
}

/** `prompt` with every key not in `set` taken from the served model's format, where it has one. */
export async function withModelPrompt(
  prompt: RunConfig["prompt"],
  set: ReadonlySet<PromptKey>,
  clients: Pick<MeshClients, "inference" | "withRetry">,
  signal?: AbortSignal,
): Promise<RunConfig["prompt"]> {
  if (FIELDS.every(([key]) => set.has(key))) return prompt;
  let format: ModelPromptFormat | undefined;
  try {
    const listed = await clients.withRetry("inference", () => clients.inference.listModels({}, { signal }), signal);
    format = listed.baseModel?.promptFormat;
  } catch (error) {
    // An inference service that predates the field or does not list models: the defaults stand.
    if (error instanceof ConnectError && error.code === Code.Unimplemented) return prompt;
    throw error;
  }
  if (!format) return prompt;
  const resolved = { ...prompt };
  for (const [key, field] of FIELDS) {
    const value = format[field];
    if (!set.has(key) && typeof value === "string") (resolved as Record<PromptKey, string>)[key] = value;
  }
  if (!["auto", "chat", "text"].includes(resolved.format))
    throw new ConnectError(
      `the served model's prompt_format.json has format ${JSON.stringify(resolved.format)}; accepted: auto, chat, text`,
      Code.FailedPrecondition,
    );
  return resolved;
}
