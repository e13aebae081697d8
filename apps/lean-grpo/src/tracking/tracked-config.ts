// The config a tracker records for a run (W&B's run config, TensorBoard's hparams text): the
// values the run used, as dotted keys. The run sections as the orchestrator resolved them
// (StartRunResponse.config), the algorithm's knobs with the learner's defaults filled in, the
// dataset, the model and every service's config as the mesh resolved it. A server section
// (ports, TLS, auth) and any key that may hold a secret (a token, an environment) are left out:
// a tracker's server is a third party.
import { ALGORITHMS } from "@lean-grpo/learner";

/** Keys never sent to a tracker, at any depth. */
const SECRET_KEYS = /^(server|token|auth|env|headers|api_key|password|secret)$/iu;

export interface TrackedSources {
  /** The train file's CLI sections (model, runs_dir, dataset). */
  file: { model: unknown; runs_dir: unknown; dataset: { path: string } };
  /** The run config as StartRunResponse.config returned it (proto JSON names are the YAML keys). */
  resolvedRun: unknown;
  /** Each service's config as the mesh started it, or the URL of a remote one. */
  services: Record<string, unknown>;
}

export function trackedConfig({ file, resolvedRun, services }: TrackedSources): Record<string, unknown> {
  const flat: Record<string, unknown> = {};
  const walk = (value: unknown, prefix: string) => {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      // An empty section holds no value the run used; its absence says as much.
      for (const [key, inner] of Object.entries(value)) if (!SECRET_KEYS.test(key)) walk(inner, prefix ? `${prefix}.${key}` : key);
    } else if (prefix) flat[prefix] = typeof value === "bigint" ? Number(value) : value;
  };
  const run = JSON.parse(JSON.stringify(resolvedRun ?? {}, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v))) as Record<
    string,
    unknown
  >;
  walk({ model: file.model, runs_dir: file.runs_dir, dataset: { path: file.dataset.path } }, "");
  walk(run, "");
  walk({ algorithm: { config: algorithmKnobs(run.algorithm) } }, "");
  walk({ services }, "");
  return flat;
}

/** Every knob of the run's algorithm: the value it was given, else the learner's default. */
function algorithmKnobs(section: unknown): Record<string, unknown> {
  const { name, config = {} } = (section ?? {}) as { name?: string; config?: Record<string, unknown> };
  const algorithm = ALGORITHMS.find((a) => a.name === name);
  if (!algorithm) return config;
  return { ...Object.fromEntries(algorithm.parameters.map((p) => [p.name, p.default])), ...config };
}
