// DAPO's soft overlong punishment (the reward service's `length` scorer) counts against a
// maximum length, 4096 tokens unless set. A run's completions can never be longer than its
// own training.max_tokens, so with the scorer's default the penalty would never apply (or,
// with a soft zone wider than the run's budget, apply to every completion). At start the
// run ties the two: the `length` scorer of the reward it uses gets max_tokens =
// training.max_tokens, and a soft zone (cache_tokens) the same quarter of it as the
// scorer's default (1024 of 4096), unless set. Values the reward sets itself that cannot
// work with the run are refused, naming the key. The override travels in
// reward.scorers, so the run's config.json shows the lengths it trained with.
import { Code, ConnectError } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import type { MeshClients } from "./mesh-clients.js";
import type { RunConfig } from "./run-config.js";

/** The `length` scorer's default soft zone as a share of its maximum (1024 of 4096). */
const CACHE_SHARE = 1024 / 4096;

export async function tieOverlongLength(clients: MeshClients, config: RunConfig, signal?: AbortSignal): Promise<void> {
  const maxTokens = config.training.max_tokens;
  const userOverride = config.reward.scorers.find((s) => s.name === "length");
  let weight: number;
  let params: JsonObject;
  let where: string;
  if (userOverride) {
    ({ weight, params } = { weight: userOverride.weight, params: { ...userOverride.params } as JsonObject });
    where = "reward.scorers[length]";
  } else {
    const listed = await clients.withRetry("reward", () => clients.reward.listScorers({}, { signal }), signal);
    const reward = config.reward.preset ? listed.presets.find((p) => p.name === config.reward.preset) : listed.active;
    // An unknown preset is the reward service's to refuse (with its list) on the first ScoreGroup.
    const length = reward?.scorers.find((s) => s.name === "length");
    if (!reward || !length) return;
    weight = length.weight;
    params = { ...(length.params ?? {}) } as JsonObject;
    where = `reward preset ${JSON.stringify(reward.name)}: length`;
    // The reward lists resolved values: a value equal to the scorer's default was not chosen
    // by the preset, so it follows the run.
    const defaults = listed.scorers.find((s) => s.name === "length")?.params ?? [];
    for (const key of ["max_tokens", "cache_tokens"]) {
      const fallback = defaults.find((p) => p.name === key)?.defaultValue;
      if (fallback !== undefined && String(params[key]) === fallback) delete params[key];
    }
  }
  if (params.max_tokens === undefined) params.max_tokens = maxTokens;
  else if (typeof params.max_tokens === "number" && params.max_tokens > maxTokens)
    throw new ConnectError(
      `${where}.max_tokens (${params.max_tokens}) exceeds training.max_tokens (${maxTokens}): no completion can reach it, ` +
        `so the overlong penalty would never apply; leave it unset (it follows training.max_tokens) or set at most ${maxTokens}`,
      Code.InvalidArgument,
    );
  const limit = params.max_tokens as number;
  if (params.cache_tokens === undefined) params.cache_tokens = Math.floor(limit * CACHE_SHARE);
  else if (typeof params.cache_tokens === "number" && params.cache_tokens > limit)
    throw new ConnectError(
      `${where}.cache_tokens (${params.cache_tokens}) is larger than its max_tokens (${limit}, from training.max_tokens): ` +
        `the soft zone must fit in the run's length; set at most ${limit}`,
      Code.InvalidArgument,
    );
  config.reward.scorers = [...config.reward.scorers.filter((s) => s.name !== "length"), { name: "length", weight, params }];
}
