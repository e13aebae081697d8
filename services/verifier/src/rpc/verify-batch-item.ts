// VerifyBatch with `invalid_items_as_results`: an item Verify would refuse with
// INVALID_ARGUMENT (its theorem refused by the screen, a bad timeout) becomes that
// item's own result — REJECTED, decided by the screen, the reason naming the field as
// the error would have — and every other item is checked. A batch checker's user
// (10,000 model outputs, one of them with a broken record) gets one answer per item.
import type { VerifyRequest } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { Verdict, VerdictTier } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import type { ReplConfig } from "../config.js";
import { InvalidField } from "../verdict/theorem-target.js";
import { validateVerifyRequest, verifyProof, type ValidVerifyRequest, type VerifyDependencies, type VerifyResult } from "./verify.js";

export type BatchItem = { valid: ValidVerifyRequest } | { invalid: InvalidField };

export function validateItem(request: VerifyRequest, config: ReplConfig, index: number): BatchItem {
  try {
    return { valid: validateVerifyRequest(request, config, `items[${index}].`) };
  } catch (error) {
    if (error instanceof InvalidField) return { invalid: error };
    throw error;
  }
}

export async function verifyBatchItem(item: BatchItem, signal: AbortSignal, deps: VerifyDependencies): Promise<VerifyResult> {
  if ("invalid" in item) return refusedItem(item.invalid, deps);
  try {
    return await verifyProof(item.valid, signal, deps);
  } catch (error) {
    // A context refused on the worker's own token table is found only once a worker reads it.
    if (error instanceof InvalidField) return refusedItem(error, deps);
    throw error;
  }
}

function refusedItem(error: InvalidField, deps: VerifyDependencies): VerifyResult {
  deps.metrics.recordVerify(Verdict[Verdict.REJECTED], 0);
  return {
    verdict: Verdict.REJECTED,
    decidedBy: VerdictTier.SCREEN,
    reason: `invalid item: ${error.message}`,
    timings: { queueMs: 0, headerMs: 0, leanMs: 0, replayMs: 0, totalMs: 0 },
  };
}
