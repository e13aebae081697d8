// Writes safetensors files (the layout is described in safetensors-reader.ts). The header
// is padded with spaces to a multiple of 8 bytes, as the reference writer does, so the
// data section starts aligned.
import { float32ToBfloat16, float32ToFloat16 } from "./float-conversion.js";

/** A float32 tensor to store as F32, or rounded to BF16 or F16 (half the bytes; what vLLM serves). */
export interface TensorToWrite {
  name: string;
  shape: number[];
  data: Float32Array;
  dtype?: "F32" | "BF16" | "F16";
}

export function serializeSafetensors(tensors: TensorToWrite[], metadata?: Record<string, string>): Uint8Array {
  const header: Record<string, unknown> = {};
  if (metadata) header.__metadata__ = metadata;
  const payloads: Uint8Array[] = [];
  let offset = 0;
  for (const tensor of tensors) {
    const elements = tensor.shape.reduce((a, b) => a * b, 1);
    if (elements !== tensor.data.length) {
      throw new Error(
        `tensor "${tensor.name}": shape [${tensor.shape.join(", ")}] has ${elements} elements, data has ${tensor.data.length}`,
      );
    }
    const dtype = tensor.dtype ?? "F32";
    const payload =
      dtype === "F32"
        ? new Uint8Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength)
        : new Uint8Array((dtype === "BF16" ? float32ToBfloat16(tensor.data) : float32ToFloat16(tensor.data)).buffer);
    header[tensor.name] = { dtype, shape: tensor.shape, data_offsets: [offset, offset + payload.byteLength] };
    payloads.push(payload);
    offset += payload.byteLength;
  }
  let headerBytes = new TextEncoder().encode(JSON.stringify(header));
  const padding = (8 - (headerBytes.byteLength % 8)) % 8;
  if (padding > 0) {
    const padded = new Uint8Array(headerBytes.byteLength + padding).fill(0x20);
    padded.set(headerBytes);
    headerBytes = padded;
  }
  const out = new Uint8Array(8 + headerBytes.byteLength + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.byteLength), true);
  out.set(headerBytes, 8);
  let position = 8 + headerBytes.byteLength;
  for (const payload of payloads) {
    out.set(payload, position);
    position += payload.byteLength;
  }
  return out;
}
