// The five services as bench/rpc/services.ts serves them, the same code on both servers:
// the verifier with the REPL stand-in (tests/fakes/lean-repl, the real JSON-lines protocol)
// as its one worker, the reward service with its math-answer judge, the TypeScript learner
// and the embedded inference service on the shipped model, and the orchestrator over a
// folder of finished runs. Each server process builds its own instances from one setup.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig, type ServiceRegistration } from "@lean-grpo/kit";
import { createInferenceService, InferenceConfigSchema } from "@lean-grpo/inference";
import { createLearnerService, LearnerConfigSchema } from "@lean-grpo/learner";
import { createOrchestratorService, OrchestratorConfigSchema } from "@lean-grpo/orchestrator";
import { createRewardService, RewardConfigSchema } from "@lean-grpo/reward";
import { createVerifierService, VerifierConfigSchema } from "@lean-grpo/verifier";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const MODEL_DIR = join(REPO_ROOT, "models/arith-tiny");

/** What the parent prepares once and both server processes share (passed as one JSON argument). */
export interface StandInSetup {
  /** The REPL stand-in's rules file (bench/verifier/bench-request.ts's rules). */
  replRules: string;
  /** A runs_dir holding finished runs (WatchRun replays them). */
  runsDir: string;
  /** A scratch folder of this server's own (learner checkpoints, inference adapters). */
  scratchDir: string;
}

export function serviceStandIns(setup: StandInSetup): ServiceRegistration[] {
  const replStandIn = [process.execPath, "--import", "tsx", join(REPO_ROOT, "tests/fakes/lean-repl/main.ts"), "--rules", setup.replRules];
  const verifier = createVerifierService(
    loadConfig(VerifierConfigSchema, {
      flags: {
        repl: {
          command: replStandIn,
          cwd: REPO_ROOT,
          pool_size: 1,
          memory_limit_mb: 0,
          // The stand-in reads its rules from a temporary folder.
          sandbox: { mode: "none" },
          // The replay tier starts a fresh checker process per PROVED proof; its cost is the
          // process start, the same on both servers, and is measured on its own (bench/verifier).
          replay: "off",
        },
      },
    }),
  );
  const reward = createRewardService(loadConfig(RewardConfigSchema, { flags: { reward: { preset: "binary" } } }));
  const learner = createLearnerService(
    loadConfig(LearnerConfigSchema, {
      flags: {
        model: { dir: MODEL_DIR, name: "arith-tiny" },
        backend: "wasm",
        checkpoint_dir: join(setup.scratchDir, "checkpoints"),
      },
    }),
  );
  const inference = createInferenceService(
    loadConfig(InferenceConfigSchema, {
      flags: {
        backend: "embedded",
        embedded: { model_dir: MODEL_DIR, tensor_backend: "wasm" },
        adapters: { dir: join(setup.scratchDir, "adapters") },
      },
    }),
  );
  const orchestrator = createOrchestratorService(loadConfig(OrchestratorConfigSchema, { flags: { runs_dir: setup.runsDir } }));
  return [verifier, reward, learner, inference, orchestrator];
}
