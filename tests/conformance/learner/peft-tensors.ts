// Reads the F32 tensors of a safetensors file from its bytes, written here from the format
// (8-byte little-endian header length, JSON header, raw data) so that the comparison of an
// exported adapter does not go through either learner's own reader.
export function readF32Safetensors(bytes: Uint8Array, what: string): Map<string, { shape: number[]; data: Float32Array }> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength))) as Record<
    string,
    { dtype: string; shape: number[]; data_offsets: [number, number] }
  >;
  const body = bytes.subarray(8 + headerLength);
  const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [name, info] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    if (info.dtype !== "F32") throw new Error(`${what}: tensor "${name}" is ${info.dtype}; the adapter should be float32`);
    const [begin, end] = info.data_offsets;
    // Copied into a buffer of its own: the body may not be 4-byte aligned (and a Buffer's slice is a view).
    const data = new Float32Array(Uint8Array.from(body.subarray(begin, end)).buffer);
    tensors.set(name, { shape: info.shape, data });
  }
  return tensors;
}
