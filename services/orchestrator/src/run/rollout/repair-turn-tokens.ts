// The token ids of a repair trajectory's environment turn: what goes between the model's
// last attempt and its next one, tokenised once by the inference service with the model's
// own chat template. The next Generate continues the trajectory's exact ids (previous
// prompt ids + sampled ids + these), so the learner trains on the ids that were sampled and
// nothing is re-tokenised from text (verl's and TRL's multi-turn rollouts do the same).
//
// The turn's text is cut out of the template itself: render [user: problem, assistant: SENTINEL,
// user: feedback] with the generation prompt and keep what follows the sentinel, i.e. the end of
// the assistant turn, the user turn holding the feedback and the next assistant header. Any
// prefix the tokenizer adds to every text (a BOS token) is dropped, and so is the end-of-turn
// token when the attempt already sampled it.
import type { MeshClients } from "../mesh-clients.js";

/** Stands for the model's attempt inside the rendered template: plain ASCII, so any vocabulary encodes it; no template emits it. */
const ATTEMPT_SENTINEL = "[[lean-grpo attempt]]";

export interface EnvironmentTurn {
  ids: number[];
  /** The text of `ids` as tokenised (markers included), for reading. */
  text: string;
}

type TokenizingClients = Pick<MeshClients, "inference" | "withRetry">;

export class EnvironmentTurnTokenizer {
  /** What the tokenizer puts before any text (BOS), looked up once. */
  private prefix?: Promise<number[]>;

  constructor(
    private readonly clients: TokenizingClients,
    private readonly chat: boolean,
    private readonly signal?: AbortSignal,
  ) {}

  /** The environment turn after an attempt whose sampled ids were `attemptIds`. */
  async turn(problem: string, feedback: string, attemptIds: readonly number[]): Promise<EnvironmentTurn> {
    const text = this.chat ? await this.chatTurnText(problem, feedback) : `\n\n${feedback}\n\n`;
    let ids = await this.tokenizeText(text);
    // The attempt ended with the end-of-turn token (an EOS stop): do not close the turn twice.
    if (attemptIds.length > 0 && ids[0] === attemptIds.at(-1)) ids = ids.slice(1);
    return { ids, text };
  }

  private async chatTurnText(problem: string, feedback: string): Promise<string> {
    const rendered = await this.tokenize({
      kind: {
        case: "chat",
        value: {
          messages: [
            { role: "user", content: problem },
            { role: "assistant", content: ATTEMPT_SENTINEL },
            { role: "user", content: feedback },
          ],
        },
      },
    });
    const at = rendered.templatedText.indexOf(ATTEMPT_SENTINEL);
    if (at < 0)
      throw new Error("the model's chat template dropped the assistant turn; repair mode needs a template that renders assistant turns");
    return rendered.templatedText.slice(at + ATTEMPT_SENTINEL.length);
  }

  private async tokenizeText(text: string): Promise<number[]> {
    this.prefix ??= this.tokenize({ kind: { case: "text", value: "" } }).then((r) => r.tokenIds);
    const [prefix, whole] = await Promise.all([this.prefix, this.tokenize({ kind: { case: "text", value: text } })]);
    const ids = whole.tokenIds;
    return prefix.length > 0 && prefix.every((id, i) => ids[i] === id) ? ids.slice(prefix.length) : ids;
  }

  private tokenize(prompt: Parameters<TokenizingClients["inference"]["tokenize"]>[0]["prompt"]) {
    return this.clients.withRetry("inference", () => this.clients.inference.tokenize({ prompt }, { signal: this.signal }), this.signal);
  }
}
