// The run's dataset.proof_format, given to every theorem whose record did not set its
// own: the theorem carries it to the reward service and the verifier (and picks the
// prompt), so a record's proof_format always wins over the run's.
import { ProofFormat, type Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { proofFormatField, type ProofFormatName } from "@lean-grpo/kit";

export function withRunProofFormat(theorems: readonly Theorem[], format: ProofFormatName): Theorem[] {
  if (format === "body") return [...theorems];
  return theorems.map((theorem) =>
    theorem.proofFormat === ProofFormat.UNSPECIFIED && theorem.statement !== ""
      ? { ...theorem, proofFormat: proofFormatField(format) }
      : theorem,
  );
}
