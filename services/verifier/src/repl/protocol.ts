// The JSON protocol of leanprover-community/repl (REPL/JSON.lean), as the service
// uses it: the two requests it sends and the three response shapes it reads.
// Requests are validated before they are written, because a request the REPL
// cannot parse kills it. Responses are parsed with plain (key-stripping) objects:
// tests check that every real response in the transcripts parses to a value equal
// to its JSON, so a field the schemas do not know would show up there.
import { z } from "zod";

/** Lean strings are UTF-8: a lone UTF-16 surrogate cannot be encoded, and the REPL's JSON parser rejects it. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

const LeanText = z
  .string()
  .refine((text) => !LONE_SURROGATE.test(text), "contains a lone UTF-16 surrogate, which Lean cannot read")
  .refine((text) => !text.includes("\u0000"), "contains a NUL character");

const Id = z.number().int().min(0);

/** `{"cmd": ..., "env": N?}`: elaborate Lean source, on top of env N or in a fresh environment. */
export const CommandRequestSchema = z.strictObject({
  cmd: LeanText,
  env: Id.optional(),
  allTactics: z.boolean().optional(),
  rootGoals: z.boolean().optional(),
  infotree: z.enum(["full", "tactics", "original", "substantive"]).optional(),
});

/** `{"tactic": ..., "proofState": N}`: run one tactic on proof state N. */
export const TacticRequestSchema = z.strictObject({
  tactic: LeanText,
  proofState: Id,
});

export type CommandRequest = z.infer<typeof CommandRequestSchema>;
export type TacticRequest = z.infer<typeof TacticRequestSchema>;
export type ReplRequest = CommandRequest | TacticRequest;

const PositionSchema = z.object({ line: z.number().int(), column: z.number().int() });

export const ReplMessageSchema = z.object({
  severity: z.enum(["error", "warning", "info", "trace"]),
  pos: PositionSchema,
  endPos: PositionSchema.nullable().optional(),
  data: z.string(),
});

export const ReplSorrySchema = z.object({
  proofState: Id.optional(),
  // Omitted by the REPL when the sorry has no source position (line 0), e.g. in tactic mode.
  pos: PositionSchema.optional(),
  endPos: PositionSchema.optional(),
  goal: z.string(),
});

/** One entry of `allTactics`: a tactic, where it is, and the goals before it. */
export const ReplTacticSchema = z.object({
  tactic: z.string(),
  proofState: Id,
  pos: PositionSchema,
  endPos: PositionSchema,
  goals: z.string(),
  usedConstants: z.array(z.string()).optional(),
});

export const CommandResponseSchema = z.object({
  // Always present, even when elaboration failed.
  env: Id,
  messages: z.array(ReplMessageSchema).optional(),
  sorries: z.array(ReplSorrySchema).optional(),
  tactics: z.array(ReplTacticSchema).optional(),
  // Raw info trees; the service passes them on untouched, so they stay JSON.
  infotree: z.array(z.json()).optional(),
});

export const ProofStepResponseSchema = z.object({
  // "Completed", "Incomplete: ...", "Error: ...", "Not verified: ..."; absent before REPL PR #63.
  proofStatus: z.string().optional(),
  proofState: Id,
  goals: z.array(z.string()),
  messages: z.array(ReplMessageSchema).optional(),
  sorries: z.array(ReplSorrySchema).optional(),
  traces: z.array(z.string()).optional(),
});

/** `{"message": ...}`: "Unknown environment.", "Unknown proof state.", "Lean error:\n..." (tactic parse errors). */
export const ReplErrorResponseSchema = z.object({ message: z.string() });

export type ReplPosition = z.infer<typeof PositionSchema>;
export type ReplMessage = z.infer<typeof ReplMessageSchema>;
export type ReplSorry = z.infer<typeof ReplSorrySchema>;
export type ReplTactic = z.infer<typeof ReplTacticSchema>;
export type CommandResponse = z.infer<typeof CommandResponseSchema>;
export type ProofStepResponse = z.infer<typeof ProofStepResponseSchema>;
export type ReplErrorResponse = z.infer<typeof ReplErrorResponseSchema>;

export type ReplResponse =
  | { kind: "command"; response: CommandResponse }
  | { kind: "proofStep"; response: ProofStepResponse }
  | { kind: "error"; response: ReplErrorResponse };

/** Validates a request; throws an Error naming the problem (a bug of the caller, never user input). */
export function validateRequest(request: ReplRequest): ReplRequest {
  const schema = "tactic" in request ? TacticRequestSchema : CommandRequestSchema;
  const result = schema.safeParse(request);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new TypeError(`invalid REPL request: ${issue.path.join(".") || "request"} ${issue.message}`);
  }
  return result.data;
}

/**
 * Reads a response by its keys: the REPL has no type tag. Returns undefined when the
 * value has none of the three shapes.
 */
export function parseResponse(value: unknown): ReplResponse | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  if ("proofState" in value && "goals" in value) {
    const result = ProofStepResponseSchema.safeParse(value);
    return result.success ? { kind: "proofStep", response: result.data } : undefined;
  }
  if ("env" in value) {
    const result = CommandResponseSchema.safeParse(value);
    return result.success ? { kind: "command", response: result.data } : undefined;
  }
  if ("message" in value) {
    const result = ReplErrorResponseSchema.safeParse(value);
    return result.success ? { kind: "error", response: result.data } : undefined;
  }
  return undefined;
}
