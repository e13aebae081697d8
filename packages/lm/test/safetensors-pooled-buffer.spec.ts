// Regression: safetensors bytes held in a pooled Node Buffer (as gRPC delivers streamed
// adapter files) must read back exactly; Buffer#slice is a view, not the copy it looks like.
import { describe, expect, it } from "vitest";
import { SafetensorsFile } from "../src/safetensors/safetensors-reader.js";
import { serializeSafetensors } from "../src/safetensors/safetensors-writer.js";

describe("safetensors from a pooled Buffer", () => {
  it("reads float32 tensors at a non-zero byteOffset", async () => {
    const data = Float32Array.from([1.5, -2.25, 3.125, 4]);
    const bytes = serializeSafetensors([{ name: "w", shape: [2, 2], data }]);
    const pooled = Buffer.concat([Buffer.from(bytes)]); // small: allocated from the shared pool
    expect(pooled.byteOffset).toBeGreaterThan(0);
    const st = await SafetensorsFile.fromBytes(pooled, "pooled");
    expect(Array.from(await st.float32("w"))).toEqual(Array.from(data));
  });
});
