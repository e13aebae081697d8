// The safetensors reader and writer: BF16/F16 widening and BF16 rounding against torch's
// own conversions (fixture written by the PyTorch reference), round trips, and a clear
// error for every kind of broken file.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SafetensorsFormatError } from "../src/errors.js";
import { float16ToFloat32, float32ToBfloat16, float32ToFloat16 } from "../src/safetensors/float-conversion.js";
import { SafetensorsFile } from "../src/safetensors/safetensors-reader.js";
import { serializeSafetensors } from "../src/safetensors/safetensors-writer.js";
import { fixturePath } from "./support/fixtures.js";

/** Bit-exact comparison that treats every NaN as equal to every NaN (and tells -0 from 0). */
function sameFloats(actual: Float32Array, expected: Float32Array) {
  expect(actual.length).toBe(expected.length);
  expected.forEach((v, i) => {
    if (Number.isNaN(v)) expect(actual[i], `index ${i}`).toBeNaN();
    else expect(Object.is(actual[i], v), `index ${i}: ${actual[i]} vs ${v}`).toBe(true);
  });
}

/** A safetensors file built by hand: header (object or raw text), then data bytes. */
function handMade(header: unknown, data: Uint8Array = new Uint8Array(0), headerLength?: number): Uint8Array {
  const json = new TextEncoder().encode(typeof header === "string" ? header : JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerLength ?? json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

describe("safetensors dtypes", () => {
  let file: SafetensorsFile;
  beforeAll(async () => {
    file = await SafetensorsFile.open(fixturePath("dtypes.safetensors"));
  });
  afterAll(() => file.close());

  it("widens BF16 exactly as torch does, specials and subnormals included", async () => {
    expect(file.info("values.bf16").dtype).toBe("BF16");
    sameFloats(await file.float32("values.bf16"), await file.float32("values.bf16.as_f32"));
  });

  it("widens F16 exactly as torch does, specials and subnormals included", async () => {
    expect(file.info("values.f16")).toMatchObject({ dtype: "F16", shape: [2, 3, 4] });
    sameFloats(await file.float32("values.f16"), await file.float32("values.f16.as_f32"));
  });

  it("rounds float32 to BF16 as torch does (nearest even)", async () => {
    const expectedBits = new Uint16Array((await file.rawBytes("rounding.bf16")).slice().buffer);
    expect(Array.from(float32ToBfloat16(await file.float32("rounding.f32")))).toEqual(Array.from(expectedBits));
  });

  it("reads the metadata", () => {
    expect(file.metadata).toEqual({ source: "scripts/reference/make_fixtures.py" });
  });
});

describe("safetensors writer", () => {
  it("round-trips F32 bit for bit and BF16 through torch-style rounding", async () => {
    // biome-ignore lint/suspicious/noApproximativeNumericConstant: an arbitrary float with many mantissa bits, not π
    const data = Float32Array.from([1.5, -0, 3.14159, 1e-30, -65504, Infinity, NaN]);
    const bytes = serializeSafetensors(
      [
        { name: "a", shape: [7], data },
        { name: "b", shape: [1, 7], data, dtype: "BF16" },
      ],
      { format: "pt" },
    );
    expect((new DataView(bytes.buffer).getUint32(0, true) + 8) % 8).toBe(0); // header padded to 8 bytes
    const file = await SafetensorsFile.fromBytes(bytes, "in-memory");
    expect(file.metadata).toEqual({ format: "pt" });
    sameFloats(await file.float32("a"), data);
    expect(file.info("b")).toMatchObject({ dtype: "BF16", shape: [1, 7] });
    // Widening the stored BF16 and rounding again gives the stored bits back.
    const widened = await file.float32("b");
    expect(Array.from(float32ToBfloat16(widened))).toEqual(Array.from(float32ToBfloat16(data)));
  });
});

describe("broken safetensors files give a clear error", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "safetensors-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const cases: Array<[string, () => Promise<Uint8Array>, RegExp]> = [
    ["shorter than the length prefix", async () => new Uint8Array(5), /5 bytes is too short/],
    [
      "header cut short",
      async () => (await readFile(fixturePath("dtypes.safetensors"))).subarray(0, 40),
      /header says \d+ bytes but the file has only 32.*truncated/,
    ],
    [
      "data cut short",
      async () => {
        const full = await readFile(fixturePath("dtypes.safetensors"));
        return full.subarray(0, full.length - 10);
      },
      /ends at byte \d+ of the data section but the file holds only \d+ data bytes \(file truncated\?\)/,
    ],
    ["header that is not JSON", async () => handMade('{"x": {"dtype": "F3'), /header is not valid UTF-8 JSON/],
    ["absurd header length", async () => handMade({}, new Uint8Array(0), 2 ** 40), /exceeds the 100000000-byte limit/],
    [
      "unknown dtype",
      async () => handMade({ x: { dtype: "F12", shape: [1], data_offsets: [0, 2] } }, new Uint8Array(2)),
      /tensor "x": unknown dtype "F12"/,
    ],
    [
      "size that does not match the shape",
      async () => handMade({ x: { dtype: "F32", shape: [2], data_offsets: [0, 4] } }, new Uint8Array(4)),
      /span 4 bytes but F32 shape \[2\] needs 8/,
    ],
    [
      "overlapping tensors",
      async () =>
        handMade(
          {
            x: { dtype: "F32", shape: [2], data_offsets: [0, 8] },
            y: { dtype: "F32", shape: [1], data_offsets: [4, 8] },
          },
          new Uint8Array(8),
        ),
      /starts at byte 4 of the data section, expected 8/,
    ],
    [
      "bytes no tensor describes",
      async () => handMade({ x: { dtype: "F32", shape: [1], data_offsets: [0, 4] } }, new Uint8Array(12)),
      /8 bytes after the last tensor/,
    ],
    [
      "negative shape",
      async () => handMade({ x: { dtype: "F32", shape: [-1], data_offsets: [0, 4] } }, new Uint8Array(4)),
      /shape \[-1\] must be a list of non-negative integers/,
    ],
  ];

  it.each(cases)("%s", async (_name, make, message) => {
    const file = path.join(dir, "broken.safetensors");
    await writeFile(file, await make());
    const error = await SafetensorsFile.open(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SafetensorsFormatError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toContain(file);
  });

  it("refuses to widen a dtype other than F32, BF16 and F16, naming it", async () => {
    const bytes = handMade({ ids: { dtype: "I64", shape: [1], data_offsets: [0, 8] } }, new Uint8Array(8));
    const file = await SafetensorsFile.fromBytes(bytes, "ids.safetensors");
    await expect(file.float32("ids")).rejects.toThrow(/ids.safetensors: tensor "ids" has dtype I64; accepted: F32, BF16, F16/);
  });
});

describe("float32 to F16", () => {
  it("rounds to nearest even as IEEE binary16 does: ties, subnormals, zero signs, overflow to infinity (Python's struct 'e')", async () => {
    const fixture = JSON.parse(await readFile(fixturePath("f16-rounding.json"), "utf8")) as { cases: [number, number][] };
    expect(fixture.cases.length).toBeGreaterThan(100);
    const values = new Float32Array(new Uint32Array(fixture.cases.map(([bits]) => bits)).buffer);
    expect(Array.from(float32ToFloat16(values))).toEqual(fixture.cases.map(([, half]) => half));
  });

  it("keeps NaN a NaN and infinities infinite", () => {
    expect(Array.from(float32ToFloat16(new Float32Array([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])))).toEqual([
      0x7e00, 0x7c00, 0xfc00,
    ]);
  });

  it("is what the writer stores for F16, and the reader widens it back", async () => {
    const data = new Float32Array([0.1, -2.75, 3e-6, 1000.5]);
    const file = await SafetensorsFile.fromBytes(serializeSafetensors([{ name: "h", shape: [4], data, dtype: "F16" }]), "f16");
    expect(file.info("h").dtype).toBe("F16");
    expect(new Uint16Array((await file.rawBytes("h")).slice().buffer)).toEqual(float32ToFloat16(data));
    expect(Array.from(await file.float32("h"))).toEqual(Array.from(float16ToFloat32(float32ToFloat16(data))));
  });
});
