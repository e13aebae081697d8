// The few messages of TensorFlow's event.proto / summary.proto that scalars and text need,
// encoded with protobuf-es's wire writer (field numbers from tensorflow/core/util/event.proto,
// tensorflow/core/framework/summary.proto, tensor.proto and tensor_shape.proto).
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";

/** tensorflow DataType DT_STRING. */
const DT_STRING = 7;

export type SummaryValue = { tag: string; scalar: number } | { tag: string; text: string };

/** Event { wall_time = 1 (double), step = 2 (int64), file_version = 3 | summary = 5 }. */
export function encodeEvent(event: { wallTime: number; step: number; fileVersion?: string; values?: readonly SummaryValue[] }): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, WireType.Bit64).double(event.wallTime);
  w.tag(2, WireType.Varint).int64(event.step);
  if (event.fileVersion !== undefined) w.tag(3, WireType.LengthDelimited).string(event.fileVersion);
  if (event.values) w.tag(5, WireType.LengthDelimited).bytes(encodeSummary(event.values));
  return w.finish();
}

/** Summary { repeated Value value = 1 }. */
function encodeSummary(values: readonly SummaryValue[]): Uint8Array {
  const w = new BinaryWriter();
  for (const value of values) w.tag(1, WireType.LengthDelimited).bytes(encodeValue(value));
  return w.finish();
}

/** Summary.Value { tag = 1, simple_value = 2 (float) | tensor = 8, metadata = 9 }. */
function encodeValue(value: SummaryValue): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, WireType.LengthDelimited).string(value.tag);
  if ("scalar" in value) {
    w.tag(2, WireType.Bit32).float(value.scalar);
  } else {
    // TensorProto { dtype = 1, tensor_shape = 2 (empty: a scalar), string_val = 8 }.
    const tensor = new BinaryWriter();
    tensor.tag(1, WireType.Varint).int32(DT_STRING);
    tensor.tag(2, WireType.LengthDelimited).bytes(new Uint8Array(0));
    tensor.tag(8, WireType.LengthDelimited).bytes(new TextEncoder().encode(value.text));
    w.tag(8, WireType.LengthDelimited).bytes(tensor.finish());
    // SummaryMetadata { plugin_data = 1: PluginData { plugin_name = 1 } }: the text plugin reads it as Markdown.
    const pluginData = new BinaryWriter().tag(1, WireType.LengthDelimited).string("text").finish();
    w.tag(9, WireType.LengthDelimited).bytes(new BinaryWriter().tag(1, WireType.LengthDelimited).bytes(pluginData).finish());
  }
  return w.finish();
}
