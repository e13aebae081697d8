// Before a run's first step: the model's tokenizer must encode every prompt of the training
// set and of the held-out set. A prompt it cannot encode (a Lean dataset's ∀ with a model
// whose vocabulary has no such character) would otherwise fail the run at the first step
// that samples it, or after a whole held-out evaluation.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { MeshClients } from "./mesh-clients.js";
import { buildPrompt } from "./prompts.js";
import type { RunConfig } from "./run-config.js";

const CONCURRENCY = 16;
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
    const refused: { id: string; message: string }[] = [];
    let next = 0;
    const worker = async () => {
      while (next < set.theorems.length) {
        const theorem = set.theorems[next++]!;
        try {
          await clients.withRetry(
            "inference",
            () => clients.inference.tokenize({ prompt: buildPrompt(theorem, prompt, chat) }, { signal }),
            signal,
          );
        } catch (error) {
          const e = ConnectError.from(error);
          if (e.code !== Code.InvalidArgument && e.code !== Code.FailedPrecondition) throw error;
          refused.push({ id: theorem.id, message: e.rawMessage });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, set.theorems.length) }, worker));
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
