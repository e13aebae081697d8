// Whether a verifier's answer shows a sorry anywhere it can show one. The REPL's
// `sorries` list holds the sorries written in the text; a sorry that a macro wrote
// (core's `stop` is `repeat sorry`) or one the REPL did not list still shows as Lean's
// "declaration uses sorry" warning, or as `sorryAx` among the theorem's axioms.
import { Severity, type VerifyResponse } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";

/** Lean's warning, in the old ('sorry') and the new (`sorry`) wording. */
const SORRY_WARNING = /declaration uses ['`]sorry['`]/u;

export function showsSorry(verification: Pick<VerifyResponse, "sorries" | "messages" | "axioms">): boolean {
  return (
    verification.sorries.length > 0 ||
    verification.axioms.includes("sorryAx") ||
    verification.messages.some((message) => message.severity === Severity.WARNING && SORRY_WARNING.test(message.data))
  );
}
