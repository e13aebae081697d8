// Theorem.proof_format as the services and configs name it: `body` (also when unset,
// as before the field existed), `whole_file`, or `auto` (a proof that begins with a
// declaration is a whole file). One mapping for every service that reads or sets it.
import { ProofFormat } from "@lean-grpo/gen/leangrpo/v1/common_pb";

export type ProofFormatName = "body" | "whole_file" | "auto";

export const PROOF_FORMAT_NAMES: readonly ProofFormatName[] = ["body", "whole_file", "auto"];

export function proofFormatName(field: ProofFormat | undefined): ProofFormatName {
  if (field === ProofFormat.WHOLE_FILE) return "whole_file";
  if (field === ProofFormat.AUTO) return "auto";
  return "body";
}

export function proofFormatField(name: ProofFormatName): ProofFormat {
  return name === "whole_file" ? ProofFormat.WHOLE_FILE : name === "auto" ? ProofFormat.AUTO : ProofFormat.BODY;
}
