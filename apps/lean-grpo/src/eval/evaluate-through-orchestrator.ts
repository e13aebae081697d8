// `lean-grpo eval` without the printing: one OrchestratorService.Evaluate call, to a running
// orchestrator (`serve all`, a deployment) or to the embedded mesh started here for the
// call, as `train` starts it. The orchestrator resolves the run, adapter or checkpoint and
// evaluates; this side only gathers the stream into a report, and hands each problem with
// its completions to `onProblem` (the `--out` file) as it arrives.
import { type EvaluatedProblem, OrchestratorService, type EvaluationSummary } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { callerAuth, createServiceClient, envAuthToken, rpcClientTracing } from "@lean-grpo/kit";
import type { EvalReport, RunConfigMessage } from "@lean-grpo/orchestrator";
import { startMesh } from "../mesh/start-mesh.js";
import { rootRelative } from "../mesh/local-paths.js";

export interface EvaluateOptions {
  /** Held-out JSONL: a path on the orchestrator's filesystem (resolved here for the embedded mesh). */
  data: string;
  /** The k of pass@k: one or several, all from the same samples. */
  ks: number[];
  /** Completions per problem; default the largest k (1: greedy). */
  samples?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  /** Called with each problem as it is scored (in the order they finish), its completions and verdicts included. */
  onProblem?: (problem: EvaluatedProblem) => void | Promise<void>;
  maxTokens?: number;
  /** Evaluate this run's latest adapter, with the run's prompt settings. */
  run?: string;
  /** Evaluate this PEFT adapter directory (adapter_config.json + adapter_model.safetensors). */
  adapter?: string;
  /** Evaluate this learner checkpoint's adapter (runs/<id>/checkpoints/step-N). */
  checkpoint?: string;
  /** The run config of a train config, whose `prompt` and `training.max_tokens` apply; a run's own settings win with `run`. */
  runConfig?: RunConfigMessage;
  seed?: number;
  /** A running orchestrator (http://host:port); unset: start the embedded mesh for this call. */
  url?: string;
  /** Embedded mesh: where runs live, the base model, per-service config sections as in a train config. */
  runsDir: string;
  /** Embedded mesh: the orchestrator's data_root, and what data, adapter and checkpoint are relative to; default: the working directory. */
  dataRoot?: string;
  modelDir: string;
  services?: Record<string, Record<string, unknown> | undefined>;
}

/** The orchestrator's report (its evaluate()), as the Evaluate stream carries it. */
export interface EvalResult extends Omit<EvalReport, "forms" | "results" | "pass_at"> {
  /** pass@k for every k asked, ascending. */
  pass_at: { k: number; value: number }[];
  /** What was evaluated: an adapter directory, or "base model". */
  evaluated: string;
  seconds: number;
  /** How the math completions answered; absent when no problem is a math problem. */
  forms?: Record<string, number | null>;
  /** Per problem, in dataset order. */
  results: { id: string; samples: number; solved: number }[];
}

export async function evaluateThroughOrchestrator(options: EvaluateOptions): Promise<EvalResult> {
  const targets = [options.run && "--run", options.adapter && "--adapter", options.checkpoint && "--checkpoint"].filter(Boolean);
  if (targets.length > 1) throw new Error(`give one of --run, --adapter and --checkpoint, not ${targets.join(" and ")}`);
  // Paths name the orchestrator's files, relative to its data_root: the working directory when the mesh runs here.
  const local = (file: string | undefined, what: string) =>
    file === undefined || options.url ? (file ?? "") : rootRelative(file, what, options.dataRoot);
  const mesh = options.url
    ? undefined
    : await startMesh({
        modelDir: options.modelDir,
        services: options.services ?? {},
        orchestrator: { runs_dir: options.runsDir, ...(options.dataRoot ? { data_root: options.dataRoot } : {}) },
      });
  const { client, transport } = createServiceClient(OrchestratorService, {
    endpoints: [options.url ?? mesh!.urls.orchestrator!],
    // The mesh token: the one the mesh started here requires, else LEANGRPO_AUTH_TOKEN for a running one.
    interceptors: [rpcClientTracing(), ...callerAuth(mesh ? mesh.token : envAuthToken())],
  });
  try {
    const results: EvalResult["results"] = [];
    let summary: EvaluationSummary | undefined;
    for await (const response of client.evaluate({
      datasetPath: local(options.data, "data"),
      runId: options.run ?? "",
      adapterPath: local(options.adapter, "--adapter"),
      checkpointPath: local(options.checkpoint, "--checkpoint"),
      ks: options.ks,
      // What an orchestrator that predates `ks` reads: its pass@k is then the largest k's.
      k: Math.max(...options.ks),
      samples: options.samples ?? 0,
      ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
      ...(options.topP !== undefined ? { topP: options.topP } : {}),
      ...(options.topK !== undefined ? { topK: options.topK } : {}),
      includeCompletions: options.onProblem !== undefined,
      maxTokens: options.maxTokens ?? 0,
      seed: BigInt(options.seed ?? 0),
      ...(options.runConfig ? { runConfig: options.runConfig } : {}),
    })) {
      const event = response.event;
      if (event.case === "problem") {
        results[event.value.index] = { id: event.value.theoremId, samples: event.value.samples, solved: event.value.solved };
        await options.onProblem?.(event.value);
      } else if (event.case === "summary") summary = event.value;
    }
    if (!summary) throw new Error("the orchestrator ended Evaluate without a summary");
    const { answerForms } = summary;
    return {
      evaluated: summary.evaluated,
      problems: summary.problems,
      k: summary.k,
      samples: summary.samples,
      greedy: summary.greedy,
      pass_at_1: summary.passAt1,
      pass_at_k: summary.passAtK,
      // An orchestrator from before several k: its one k.
      pass_at:
        summary.passAt.length > 0
          ? summary.passAt.map(({ k, value }) => ({ k, value }))
          : [
              ...new Map([
                [1, summary.passAt1],
                [summary.k, summary.passAtK],
              ]),
            ].map(([k, value]) => ({ k, value })),
      seconds: summary.seconds,
      ...(answerForms
        ? {
            forms: {
              completions: answerForms.completions,
              right_number: answerForms.rightNumber,
              boxed: answerForms.boxed,
              worked_share: answerForms.workedShare,
              accuracy_worked: answerForms.accuracyWorked ?? null,
              accuracy_direct: answerForms.accuracyDirect ?? null,
              right_number_worked: answerForms.rightNumberWorked ?? null,
              right_number_direct: answerForms.rightNumberDirect ?? null,
              completion_tokens: answerForms.completionTokens,
              truncated: answerForms.truncated,
            },
          }
        : {}),
      results,
    };
  } finally {
    transport.close();
    await mesh?.shutdown();
  }
}
