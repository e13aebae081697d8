// `lean-grpo eval --out FILE`: one JSON line per problem, in the order the problems finish,
// with every completion, its verdict and the first Lean error (or the math check's result).
// The schema is documented in docs/guide/commands.md (eval); field names are snake_case like
// the run's other JSONL files.
import { open, type FileHandle } from "node:fs/promises";
import { FinishReason } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { EvaluatedCompletion, EvaluatedProblem } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";

export interface CompletionLine {
  text: string;
  tokens: number;
  finish_reason: string;
  solved: boolean;
  reward: number;
  verdict?: string;
  reason?: string;
  first_error?: string;
  math_check?: string;
}

export interface ProblemLine {
  /** Position in the dataset (0-based). */
  index: number;
  id: string;
  samples: number;
  solved: number;
  completions: CompletionLine[];
}

export function problemLine(problem: EvaluatedProblem): ProblemLine {
  return {
    index: problem.index,
    id: problem.theoremId,
    samples: problem.samples,
    solved: problem.solved,
    completions: problem.completions.map(completionLine),
  };
}

function completionLine(completion: EvaluatedCompletion): CompletionLine {
  return {
    text: completion.text,
    tokens: completion.tokens,
    finish_reason: (FinishReason[completion.finishReason] ?? "UNSPECIFIED").toLowerCase(),
    solved: completion.solved,
    reward: completion.reward,
    ...(completion.verdict !== Verdict.UNSPECIFIED ? { verdict: Verdict[completion.verdict] } : {}),
    ...(completion.reason ? { reason: completion.reason } : {}),
    ...(completion.firstError ? { first_error: completion.firstError } : {}),
    ...(completion.mathCheck ? { math_check: completion.mathCheck } : {}),
  };
}

/** The --out file, created (or emptied) before the evaluation starts so a bad path fails first. */
export class CompletionsFile {
  private constructor(
    private readonly handle: FileHandle,
    readonly path: string,
  ) {}

  static async create(file: string): Promise<CompletionsFile> {
    try {
      return new CompletionsFile(await open(file, "w"), file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new Error(`--out ${file}: cannot write it (${code}); give a file path in an existing, writable directory`);
    }
  }

  async write(problem: EvaluatedProblem): Promise<void> {
    await this.handle.write(`${JSON.stringify(problemLine(problem))}\n`);
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}
