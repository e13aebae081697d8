// REPL values in the contract's messages.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Severity, type LeanMessageSchema, type SorrySchema } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import type { ReplMessage, ReplPosition, ReplSorry } from "../repl/protocol.js";

const SEVERITIES: Record<ReplMessage["severity"], Severity> = {
  error: Severity.ERROR,
  warning: Severity.WARNING,
  info: Severity.INFO,
  // The contract has no trace level; traces are informational output.
  trace: Severity.INFO,
};

export function toLeanMessage(message: ReplMessage): MessageInitShape<typeof LeanMessageSchema> {
  return {
    severity: SEVERITIES[message.severity],
    pos: toPosition(message.pos),
    endPos: message.endPos ? toPosition(message.endPos) : undefined,
    data: message.data,
  };
}

export function toSorry(sorry: ReplSorry): MessageInitShape<typeof SorrySchema> {
  return {
    pos: sorry.pos ? toPosition(sorry.pos) : undefined,
    endPos: sorry.endPos ? toPosition(sorry.endPos) : undefined,
    goal: sorry.goal,
  };
}

function toPosition(position: ReplPosition) {
  // Tactic-mode messages carry line 0; uint32 fields cannot hold a negative either way.
  return { line: Math.max(0, position.line), column: Math.max(0, position.column) };
}
