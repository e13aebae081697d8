// Folds a LoRA adapter into the base weights (W' = W + scaling·B·A), so a warm-started
// model ships as a plain Hugging Face directory that every service loads without an adapter.
import { AdapterError } from "../errors.js";
import type { Checkpoint } from "../model/checkpoint.js";
import type { PeftTensor } from "./lora-adapter.js";

/** W[out, in] += scaling · B[out, r] · A[r, in], for every adapted linear of the checkpoint. */
export function mergeLora(checkpoint: Checkpoint, tensors: readonly PeftTensor[], scaling: number): void {
  const byKey = new Map(tensors.map((t) => [t.key, t]));
  for (const a of tensors) {
    if (!a.key.endsWith(".lora_A.weight")) continue;
    const b = byKey.get(a.key.replace(".lora_A.", ".lora_B."));
    const name = a.key.replace("base_model.model.", "").replace(".lora_A.weight", ".weight");
    const weight = checkpoint.weights.get(name);
    if (!b || !weight) throw new AdapterError(`cannot merge ${a.key}: ${b ? `the model has no ${name}` : "its lora_B is missing"}`);
    const [rank, fanIn] = a.shape;
    const fanOut = b.shape[0];
    // A and B from another model (or another rank) would write past or short of the weight.
    if (b.shape[1] !== rank || fanOut * fanIn !== weight.length)
      throw new AdapterError(
        `cannot merge ${a.key}: lora_A [${a.shape.join(", ")}] and lora_B [${b.shape.join(", ")}] do not fit ${name} (${weight.length} elements); is the adapter for this base model?`,
      );
    for (let o = 0; o < fanOut; o++) {
      for (let k = 0; k < rank; k++) {
        const coefficient = scaling * b.data[o * rank + k]!;
        if (coefficient === 0) continue;
        const row = o * fanIn;
        const aRow = k * fanIn;
        for (let i = 0; i < fanIn; i++) weight[row + i]! += coefficient * a.data[aRow + i]!;
      }
    }
  }
}
