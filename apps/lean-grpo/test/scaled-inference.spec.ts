// Training through 2 and 3 inference replicas (the embedded sampler, each its own server on
// loopback, each with its own adapters.dir and log): every replica loads each adapter version
// before it samples for it, and the run computes what the one-replica run computes. A replica
// shut down mid-run and started again on its address empty is brought to the current adapter
// before it samples, and the run completes. In tactic mode (Generate turns alternating with the
// verifier's StartProof/ApplyTactic/EndProof on the Lean REPL stand-in) 2 replicas each serve
// rollout turns, each after loading the version it samples with, and the run completes.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunState, type Run } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { createInferenceService, InferenceConfigSchema, type InferenceServiceOptions } from "@lean-grpo/inference";
import { loadConfig, serve, type RunningServer } from "@lean-grpo/kit";
import type { StepRecord } from "@lean-grpo/orchestrator";
import { startMesh } from "../src/mesh/start-mesh.js";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";
import { watchToEnd, withMesh } from "./support/orchestrator-client.js";
import { replStandIn, type Rule } from "./support/repl-stand-in.js";

let fixture: MeshFixture;
beforeAll(async () => {
  fixture = await meshFixture();
});
afterAll(() => fixture?.cleanup());

interface LogLine {
  msg: string;
  adapter: string;
}

/** One inference replica in this process, logging to `log`. */
class InferenceReplica {
  readonly log: LogLine[] = [];
  private server: RunningServer | undefined;
  constructor(
    private readonly name: string,
    private port = 0,
  ) {}

  get url(): string {
    return this.server!.url;
  }

  async start(): Promise<this> {
    const config = loadConfig(InferenceConfigSchema, {
      overrides: [
        `embedded.model_dir=${fixture.modelDir}`,
        "embedded.tensor_backend=cpu",
        // Its own, as every replica's must be where they share a filesystem (deploy.md).
        `adapters.dir=${path.join(fixture.dir, `adapters-${this.name}-${Date.now()}`)}`,
        `server.port=${this.port}`,
        "server.shutdown.drain_delay_ms=0",
        "server.shutdown.grace_period_ms=200",
      ],
    });
    const record = (fields: object, msg: string) => this.log.push({ msg, adapter: (fields as { adapter: string }).adapter });
    // The service logs through two methods of the kit's logger; these keep what it says.
    const logger = { info: record, warn: record } as unknown as NonNullable<InferenceServiceOptions["logger"]>;
    this.server = await serve({ name: "inference", services: [createInferenceService(config, { logger })], config: config.server });
    this.port = Number(new URL(this.server.url).port);
    return this;
  }

  async stop(): Promise<void> {
    await this.server?.shutdown();
  }

  /** Adapters in the order this replica loaded them, and in the order it first sampled with them. */
  order(): { loaded: string[]; sampled: string[] } {
    return {
      loaded: this.log.filter((l) => l.msg === "adapter loaded").map((l) => l.adapter),
      sampled: this.log.filter((l) => l.msg === "first Generate with this adapter").map((l) => l.adapter),
    };
  }

  /** Every adapter it sampled with was loaded before its first Generate with it. */
  expectLoadedBeforeSampled(): void {
    for (const adapter of this.order().sampled) {
      const loadedAt = this.log.findIndex((l) => l.msg === "adapter loaded" && l.adapter === adapter);
      const sampledAt = this.log.findIndex((l) => l.msg === "first Generate with this adapter" && l.adapter === adapter);
      expect(loadedAt, `${this.name} sampled ${adapter} without loading it`).toBeGreaterThanOrEqual(0);
      expect(loadedAt).toBeLessThan(sampledAt);
    }
  }
}

interface RunOptions {
  onStep?: (step: number) => unknown;
  /** Relative to the fixture's directory; by default its arithmetic problems. */
  dataset?: string;
  /** Training keys beyond tinyTraining's, and the run config's other sections. */
  training?: Record<string, unknown>;
  config?: Record<string, unknown>;
  /** The verifier's config section (the REPL stand-in's). */
  verifier?: Record<string, unknown>;
}

async function trainThrough(replicas: InferenceReplica[], runId: string, steps: number, options: RunOptions = {}): Promise<Run> {
  const mesh = await startMesh({
    modelDir: fixture.modelDir,
    services: {
      inference: { url: replicas[0]!.url },
      learner: { backend: "cpu", lora: { rank: 2, alpha: 4 }, optimizer: { learning_rate: 1e-2 } },
      ...(options.verifier ? { verifier: options.verifier } : {}),
    },
    orchestrator: {
      runs_dir: fixture.runsDir,
      data_root: fixture.dir,
      retry_backoff_ms: 50,
      service_retries: 3,
      services: { inference: replicas.map((r) => r.url) },
    },
  });
  return withMesh(mesh, async (client) => {
    await client.startRun({
      datasetPath: options.dataset ?? fixture.dataset,
      runId,
      config: { ...options.config, training: tinyTraining(steps, options.training) },
    });
    return watchToEnd(client, runId, options.onStep);
  });
}

async function stepsOf(run: Run): Promise<StepRecord[]> {
  return (await readFile(path.join(run.outputDir, "metrics.jsonl"), "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as StepRecord);
}

/** What a step computed from its samples; timings, throughput and the probe's engine noise are not that. */
function computed(steps: StepRecord[]) {
  return steps.map(({ step, adapter_version, metrics }) => {
    const { tokens_per_second: _t, adapter_check_logp_difference: _d, ...rest } = metrics;
    return { step, adapter_version, metrics: rest };
  });
}

describe("training through several inference replicas", () => {
  let single: StepRecord[];
  const STEPS = 2;

  it("one replica: the reference run", async () => {
    const replica = await new InferenceReplica("single").start();
    try {
      const run = await trainThrough([replica], "scaled-1", STEPS);
      expect(run.error).toBe("");
      expect(run.state).toBe(RunState.COMPLETED);
      single = await stepsOf(run);
    } finally {
      await replica.stop();
    }
  }, 120_000);

  for (const count of [2, 3]) {
    it(`${count} replicas: each loads every version before sampling with it, and the run computes what one replica's does`, async () => {
      const replicas = await Promise.all(Array.from({ length: count }, (_, i) => new InferenceReplica(`r${i}`).start()));
      try {
        const run = await trainThrough(replicas, `scaled-${count}`, STEPS);
        expect(run.error).toBe("");
        expect(run.state).toBe(RunState.COMPLETED);
        const steps = await stepsOf(run);
        const versions = [...new Set(steps.map((s) => s.adapter_version).filter((v) => v > 0))].map((v) => `policy-v${v}`);
        expect(versions.length).toBeGreaterThan(0);
        for (const replica of replicas) {
          // The sync reached every replica, in version order; each sampled with each (the per-replica check's probe at least).
          expect(replica.order().loaded).toEqual(versions);
          expect(replica.order().sampled).toEqual(expect.arrayContaining(versions));
          replica.expectLoadedBeforeSampled();
        }
        // Each request's seed decides its tokens whichever replica serves it, and the sampler
        // gives the same tokens alone or batched: the same samples, so the same training.
        expect(computed(steps)).toEqual(computed(single));
      } finally {
        await Promise.all(replicas.map((r) => r.stop()));
      }
    }, 180_000);
  }

  it("a replica shut down after step 1 and started again, empty, on its address is loaded with the current adapter before it samples", async () => {
    const replicas = await Promise.all([new InferenceReplica("a").start(), new InferenceReplica("b").start()]);
    let restarted: InferenceReplica | undefined;
    try {
      const run = await trainThrough(replicas, "scaled-restart", 3, {
        onStep: async (step) => {
          if (step !== 1 || restarted) return;
          const port = Number(new URL(replicas[1]!.url).port);
          await replicas[1]!.stop();
          restarted = await new InferenceReplica("b-again", port).start();
        },
      });
      expect(run.error).toBe("");
      expect(run.state).toBe(RunState.COMPLETED);
      expect(restarted).toBeDefined();
      const { loaded, sampled } = restarted!.order();
      // It came back holding nothing; whatever it sampled with, it was given first, by the orchestrator.
      expect(sampled.length).toBeGreaterThan(0);
      expect(loaded).toEqual(expect.arrayContaining(sampled));
      restarted!.expectLoadedBeforeSampled();
      const steps = await stepsOf(run);
      expect(steps.map((s) => s.step)).toEqual([1, 2, 3]);
    } finally {
      await Promise.all([...replicas, ...(restarted ? [restarted] : [])].map((r) => r.stop()));
    }
  }, 180_000);
});

// The statement of the REPL's proof_branching transcript, whose first answer opens it.
const STATEMENT = "theorem complex_and (p q r : Prop) (h1 : p ∧ q) (h2 : q → r) : p ∧ r";
const RULES: Rule[] = [
  { when: { cmd: { equals: `${STATEMENT} := by sorry` } }, reply: { transcript: "proof_branching", response: 0 } },
  // The assembled proof's re-check in command mode.
  { when: { cmd: { includes: "theorem complex_and" } }, declares: { axioms: [] } },
  // A digit closes the goal, a lowercase letter leaves one open, anything else is unknown to Lean.
  { when: { tactic: { regex: "^[0-9]" } }, reply: { json: { proofStatus: "Completed", proofState: 0, goals: [] } } },
  {
    when: { tactic: { regex: "^[a-z]" } },
    reply: { json: { proofStatus: "Incomplete: open goals remain", proofState: 0, goals: ["⊢ q"] } },
  },
  { when: { tactic: { regex: "" } }, reply: { transcript: "unknown_tactic", response: 1 } },
];

describe("tactic mode through several inference replicas", () => {
  it("2 replicas: each serves rollout turns, each after loading the version it samples with, and the run completes", async () => {
    // One REPL process: a few turns a step, and one process less to start.
    const repl = replStandIn({ rules: RULES }, 1);
    const dataset = "lean-tactic.jsonl";
    await writeFile(
      path.join(fixture.dir, dataset),
      ["and-1", "and-2"].map((id) => JSON.stringify({ id, name: "complex_and", statement: STATEMENT, imports: ["Mathlib"] })).join("\n"),
    );
    const replicas = await Promise.all([new InferenceReplica("t0").start(), new InferenceReplica("t1").start()]);
    try {
      const run = await trainThrough(replicas, "scaled-tactic", 2, {
        dataset,
        verifier: repl.verifierSection,
        // The adapter check's probe would sample each version on every replica by itself; off,
        // a replica's first Generate with a version is a rollout turn's.
        training: { mode: "tactic", max_proof_steps: 2, seed: 3, adapter_check: { max_logp_difference: null } },
        // The tiny model's context is 256 tokens: a short prompt.
        config: { prompt: { tactic_template: "{statement}\n{proof}{goals}\n" } },
      });
      expect(run.error).toBe("");
      expect(run.state).toBe(RunState.COMPLETED);
      const steps = await stepsOf(run);
      expect(steps.map((s) => s.step)).toEqual([1, 2]);
      // The rollouts went through the verifier's sessions: StartProof and ApplyTactic reached the REPL.
      const requests = repl.requests();
      expect(requests.some((r) => r.kind === "command" && r.cmd.endsWith(":= by sorry"))).toBe(true);
      expect(requests.some((r) => r.kind === "tactic")).toBe(true);
      const versions = [...new Set(steps.map((s) => s.adapter_version).filter((v) => v > 0))].map((v) => `policy-v${v}`);
      expect(versions.length).toBeGreaterThan(0);
      // A step's turns sample with the version the step before trained; the last step's is loaded, then nothing samples.
      const rolledOutWith = versions.slice(0, -1);
      expect(rolledOutWith.length).toBeGreaterThan(0);
      for (const replica of replicas) {
        // Every version reached every replica, in order, and the balancer gave each replica turns with each version used.
        expect(replica.order().loaded).toEqual(versions);
        expect(replica.order().sampled).toEqual(rolledOutWith);
        replica.expectLoadedBeforeSampled();
      }
    } finally {
      await Promise.all(replicas.map((r) => r.stop()));
      repl.cleanup();
    }
  }, 120_000);
});
