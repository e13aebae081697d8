// Safetensors files without tfjs: read, write, and the float16/bfloat16 conversions.
export { SafetensorsFormatError } from "../errors.js";
export { bfloat16ToFloat32, float16ToFloat32, float32ToBfloat16 } from "./float-conversion.js";
export { FLOAT_DTYPES, SafetensorsFile, type SafetensorsTensorInfo } from "./safetensors-reader.js";
export { serializeSafetensors, type TensorToWrite } from "./safetensors-writer.js";
