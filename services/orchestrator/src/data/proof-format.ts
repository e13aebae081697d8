// The run's dataset.proof_format, given to every theorem whose record did not set its
// own: the theorem carries it to the reward service and the verifier (and picks the
// prompt), so a record's proof_format always wins over the run's.
import { ProofFormat, type Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { proofFormatField, type ProofFormatName } from "@lean-grpo/kit";
import type { TrainingSet } from "./training-set.js";

export function withRunProofFormat(theorems: readonly Theorem[], format: ProofFormatName): Theorem[] {
  if (format === "body") return [...theorems];
  return theorems.map((theorem) =>
    theorem.proofFormat === ProofFormat.UNSPECIFIED && theorem.statement !== ""
      ? { ...theorem, proofFormat: proofFormatField(format) }
      : theorem,
  );
}

/** `set` with the run's proof_format given to its records as they are read (and to its checked sample). */
export function trainingSetWithProofFormat(set: TrainingSet, format: ProofFormatName): TrainingSet {
  if (format === "body") return set;
  return {
    size: set.size,
    checked: withRunProofFormat(set.checked, format),
    streamed: set.streamed,
    at: async (indices) => withRunProofFormat(await set.at(indices), format),
    close: () => set.close(),
  };
}
