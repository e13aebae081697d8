// Conversions between the 16-bit float formats of checkpoints and float32, the only
// dtype the learner computes in. BF16 is the top half of a float32, so widening is exact;
// F16 values are all exactly representable in float32 too.

/** BF16 bit patterns to float32: each value becomes its bits shifted into the high half. */
export function bfloat16ToFloat32(bits: Uint16Array): Float32Array {
  const out = new Uint32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = bits[i]! << 16;
  return new Float32Array(out.buffer);
}

/**
 * float32 to BF16 bit patterns, rounding to nearest even as torch's `.to(torch.bfloat16)`
 * does; NaN becomes the quiet NaN 0x7fc0 (sign kept).
 */
export function float32ToBfloat16(values: Float32Array): Uint16Array {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const x = bits[i]!;
    if ((x & 0x7fffffff) > 0x7f800000) {
      out[i] = ((x >>> 16) & 0x8000) | 0x7fc0;
    } else {
      out[i] = (x + 0x7fff + ((x >>> 16) & 1)) >>> 16;
    }
  }
  return out;
}

let halfTable: Float32Array | undefined;

/** All 65,536 F16 values as float32, built once (256 KiB): widening is then one lookup. */
function float16Table(): Float32Array {
  if (halfTable) return halfTable;
  const table = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >>> 10) & 0x1f;
    const mantissa = h & 0x3ff;
    if (exponent === 0) table[h] = sign * mantissa * 2 ** -24;
    else if (exponent === 31) table[h] = mantissa === 0 ? sign * Infinity : NaN;
    else table[h] = sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
  }
  halfTable = table;
  return table;
}

/** F16 (IEEE half) bit patterns to float32. */
export function float16ToFloat32(bits: Uint16Array): Float32Array {
  const table = float16Table();
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = table[bits[i]!]!;
  return out;
}

/**
 * float32 to F16 (IEEE half) bit patterns, rounding to nearest even as torch's
 * `.to(torch.float16)` does: values past the largest half become ±Infinity, values below
 * the smallest subnormal ±0; NaN becomes the quiet NaN 0x7e00 (sign kept).
 */
export function float32ToFloat16(values: Float32Array): Uint16Array {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const x = bits[i]!;
    const sign = (x >>> 16) & 0x8000;
    const exponent = (x >>> 23) & 0xff;
    const mantissa = x & 0x7fffff;
    if (exponent === 0xff) {
      out[i] = sign | (mantissa === 0 ? 0x7c00 : 0x7e00);
      continue;
    }
    // The half's biased exponent; below 1 the value is a subnormal half (or rounds to zero).
    const halfExponent = exponent - 127 + 15;
    if (halfExponent >= 0x1f) {
      out[i] = sign | 0x7c00;
      continue;
    }
    if (halfExponent <= 0) {
      if (halfExponent < -10) {
        out[i] = sign;
        continue;
      }
      // The implicit leading 1 made explicit, then shifted into the subnormal's 10 bits.
      const full = mantissa | 0x800000;
      const shift = 14 - halfExponent;
      const kept = full >>> shift;
      const rest = full & ((1 << shift) - 1);
      const half = 1 << (shift - 1);
      out[i] = sign | (kept + (rest > half || (rest === half && (kept & 1) === 1) ? 1 : 0));
      continue;
    }
    const kept = (halfExponent << 10) | (mantissa >>> 13);
    const rest = mantissa & 0x1fff;
    // A carry out of the mantissa steps the exponent up, to Infinity past the largest half: both right.
    out[i] = sign | (kept + (rest > 0x1000 || (rest === 0x1000 && (kept & 1) === 1) ? 1 : 0));
  }
  return out;
}
