// Before a run's first step: the model's tokenizer must encode every prompt of the training
// set and of the held-out set. A prompt it cannot encode (a Lean dataset's ∀ with a model
// whose vocabulary has no such character) would otherwise fail the run at the first step
// that samples it, or after a whole held-out evaluation.
//
// Each set goes to the inference service as one TokenizeBatch stream: the check costs one
// call (and one span) per set, however many records the dataset has.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { MeshClients } from "../mesh-clients.js";
import { buildPrompt } from "../rollout/prompts.js";
import type { RunConfig } from "../config/run-config.js";
import { inSpan } from "../outputs/tracing.js";

const SHOWN = 3;

export interface PromptSet {
  /** What the prompts come from, for the message: "dataset examples/x.jsonl", "held-out set ...". */
  label: string;
  theorems: readonly Theorem[];
}

/** Throws INVALID_ARGUMENT naming the first prompts the tokenizer refused, and why; UNAVAILABLE passes through. */
export async function checkPromptsEncode(
  clients: Pick<MeshClients, "inference" | "withRetry">,
  sets: readonly PromptSet[],
  prompt: RunConfig["prompt"],
  chat: boolean,
  signal?: AbortSignal,
): Promise<void> {
  for (const set of sets) {
    if (set.theorems.length === 0) continue;
    const refused = await inSpan("prompt.check", { "leangrpo.prompts": set.theorems.length }, () =>
      clients.withRetry("inference", () => refusedPrompts(clients, set.theorems, prompt, chat, signal), signal),
    );
    if (refused.length === 0) continue;
    const shown = refused
      .slice(0, SHOWN)
      .map((r) => `${r.id}: ${r.message}`)
      .join("; ");
    throw new ConnectError(
      `the model's tokenizer cannot encode ${refused.length} of the ${set.theorems.length} prompts of the ${set.label} (${shown}${refused.length > SHOWN ? "; ..." : ""}); ` +
        "use a model whose tokenizer covers these characters (model.dir), or a dataset the model can read",
      Code.InvalidArgument,
    );
  }
}

async function refusedPrompts(
  clients: Pick<MeshClients, "inference">,
  theorems: readonly Theorem[],
  prompt: RunConfig["prompt"],
  chat: boolean,
  signal?: AbortSignal,
): Promise<{ id: string; message: string }[]> {
  // Prompts are built as the stream is read, so a large dataset is never all in memory twice.
  async function* requests() {
    for (const theorem of theorems) yield { prompt: buildPrompt(theorem, prompt, chat) };
  }
  const refused: { id: string; message: string }[] = [];
  let answered = 0;
  for await (const result of clients.inference.tokenizeBatch(requests(), { signal })) {
    answered++;
    if (result.error) refused.push({ id: theorems[result.index]?.id ?? `#${result.index}`, message: result.error });
  }
  if (answered !== theorems.length)
    throw new ConnectError(`TokenizeBatch answered ${answered} of ${theorems.length} prompts`, Code.DataLoss);
  return refused;
}
