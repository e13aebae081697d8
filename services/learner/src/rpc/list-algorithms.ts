// ListAlgorithms: each algorithm with what it is for and its algorithm_config keys.
import { create } from "@bufbuild/protobuf";
import { ListAlgorithmsResponseSchema, type ListAlgorithmsResponse } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { ALGORITHMS } from "../algorithms/registry.js";

export function listAlgorithms(): ListAlgorithmsResponse {
  return create(ListAlgorithmsResponseSchema, {
    algorithms: ALGORITHMS.map((a) => ({
      name: a.name,
      title: a.title,
      summary: a.summary,
      params: a.parameters.map((p) => ({
        name: p.name,
        type: p.type,
        defaultValue: JSON.stringify(p.default),
        description: p.description,
        allowedValues: p.allowed ? [...p.allowed] : [],
        aliases: [...(p.aliases ?? [])],
      })),
    })),
  });
}
