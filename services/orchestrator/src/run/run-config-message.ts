// The run config on the wire. StartRunRequest.run_config is the typed RunConfig message of
// orchestrator.proto, whose JSON field names are the YAML keys of configs/train/*.yaml, so
// one shape serves the YAML files, the message's JSON and the owner's schema (run-config.ts).
// This module only moves values between those shapes; RunConfigSchema, parsed once in
// run-manager.ts, decides what is valid and fills the defaults.
import { fromJson, toJson, type DescMessage, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  RunConfigSchema as RunConfigMessageSchema,
  type RunConfig as RunConfigMessage,
  type StartRunRequest,
} from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import type { RunConfig } from "./run-config.js";

export type { RunConfigMessage };
export { RunConfigMessageSchema };

/** A run config the message cannot hold: `path` is the YAML key ("training.stepz"). */
export class RunConfigShapeError extends Error {
  override readonly name = "RunConfigShapeError";
  constructor(
    readonly path: string,
    detail: string,
  ) {
    super(`${path}: ${detail}`);
  }
}

/**
 * A YAML-shaped run config (a train file's run sections, or a resolved RunConfig) as the
 * typed message. Unknown keys are refused naming their path and the accepted keys; values of
 * the wrong type are refused naming the field. Ranges and defaults are the owner's (StartRun).
 */
export function runConfigToMessage(json: unknown): RunConfigMessage {
  if (!isObject(json)) throw new RunConfigShapeError("run config", `expected an object of sections, got ${JSON.stringify(json)}`);
  const unknown = unknownKeys(RunConfigMessageSchema, json, []);
  if (unknown) throw unknown;
  try {
    return fromJson(RunConfigMessageSchema, toMessageJson(json) as JsonValue);
  } catch (error) {
    // protobuf-es names a field by its message, "cannot decode field leangrpo.v1.RunConfig.Training.steps from JSON: ...".
    const message = (error as Error).message;
    const field = /^cannot decode field ([\w.]+)\.(\w+) from JSON: (.*)$/s.exec(message);
    const section = field ? YAML_PATHS.get(field[1]!) : undefined;
    if (field && section !== undefined) throw new RunConfigShapeError([section, field[2]].filter(Boolean).join("."), field[3]!);
    throw new RunConfigShapeError("run config", message);
  }
}

/** Each message of RunConfig by the YAML path of its section ("training.adapter_check"; "reward.scorers[]"). */
const YAML_PATHS = sectionPaths(RunConfigMessageSchema, "", new Map());

function sectionPaths(desc: DescMessage, path: string, into: Map<string, string>): Map<string, string> {
  into.set(desc.typeName, path);
  for (const field of desc.fields) {
    if (
      (field.fieldKind === "message" || (field.fieldKind === "list" && field.listKind === "message")) &&
      !field.message.typeName.startsWith("google.")
    ) {
      const at = [path, field.name].filter(Boolean).join(".");
      sectionPaths(field.message, field.fieldKind === "list" ? `${at}[]` : at, into);
    }
  }
  return into;
}

/** The resolved config as the message (StartRunResponse.config). */
export function resolvedConfigMessage(config: RunConfig): RunConfigMessage {
  return runConfigToMessage(config);
}

/**
 * StartRun's config as the schema's input, from `run_config` or the deprecated Struct
 * `config` (the same YAML shape, still accepted for older clients): the one place the two
 * request fields meet. Both set is INVALID_ARGUMENT.
 */
export function runConfigInput(request: Pick<StartRunRequest, "config" | "runConfig">): Record<string, unknown> {
  const legacy = request.config !== undefined && Object.keys(request.config).length > 0;
  if (request.runConfig && legacy)
    throw new ConnectError("set run_config or the deprecated config (a Struct of the same shape), not both", Code.InvalidArgument);
  if (request.runConfig)
    return fromMessageJson(toJson(RunConfigMessageSchema, request.runConfig, { useProtoFieldName: true }) as JsonObject);
  return (request.config ?? {}) as Record<string, unknown>;
}

// Two YAML values have no proto3 scalar of their own: training.dynamic_sampling "auto" is the
// unset bool, and adapter_check.max_logp_difference null (check off) is `off: true`.
function toMessageJson(json: Record<string, unknown>): Record<string, unknown> {
  const training = json.training;
  if (!isObject(training)) return json;
  const out = { ...training };
  if (out.dynamic_sampling === "auto") delete out.dynamic_sampling;
  const check = out.adapter_check;
  if (isObject(check) && check.max_logp_difference === null) {
    const { max_logp_difference: _off, ...rest } = check;
    out.adapter_check = { ...rest, off: true };
  }
  return { ...json, training: out };
}

function fromMessageJson(json: Record<string, unknown>): Record<string, unknown> {
  const training = json.training;
  if (!isObject(training) || !isObject(training.adapter_check) || !("off" in training.adapter_check)) return json;
  const { off, ...check } = training.adapter_check;
  return { ...json, training: { ...training, adapter_check: off === true ? { ...check, max_logp_difference: null } : check } };
}

/** The first key of `json` the message has no field for, with its YAML path. Struct fields (knobs, params) are open. */
function unknownKeys(desc: DescMessage, json: Record<string, unknown>, path: readonly string[]): RunConfigShapeError | undefined {
  for (const [key, value] of Object.entries(json)) {
    const field = desc.fields.find((f) => f.name === key || f.jsonName === key);
    const at = [...path, key];
    if (!field) {
      const accepted = desc.fields.map((f) => f.name);
      return new RunConfigShapeError(at.join("."), `unknown key; accepted: ${accepted.join(", ")}`);
    }
    const child =
      field.fieldKind === "message"
        ? field.message
        : field.fieldKind === "list" && field.listKind === "message"
          ? field.message
          : undefined;
    if (!child || child.typeName.startsWith("google.protobuf.")) continue;
    const items =
      field.fieldKind === "list" && Array.isArray(value) ? value.map((v, i) => [v, [...at, String(i)]] as const) : [[value, at] as const];
    for (const [item, itemPath] of items) {
      if (!isObject(item)) continue;
      const found = unknownKeys(child, item, itemPath);
      if (found) return found;
    }
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
