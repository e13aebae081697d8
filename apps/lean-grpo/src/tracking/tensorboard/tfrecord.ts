// TFRecord framing, the container of TensorBoard event files: each record is
//   uint64 length (little-endian) | uint32 masked crc32c of the length | data | uint32 masked crc32c of the data
// (tensorflow/core/lib/io/record_writer.cc; the mask is tensorflow/core/lib/hash/crc32c.h Mask).
import { crc32c } from "@aws-crypto/crc32c";

const MASK_DELTA = 0xa282ead8;

/** crc32c rotated right by 15 bits plus a constant, so a CRC of data holding CRCs stays well spread. */
export function maskedCrc32c(data: Uint8Array): number {
  const crc = crc32c(data);
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + MASK_DELTA) >>> 0;
}

export function tfRecord(data: Uint8Array): Buffer {
  const header = Buffer.alloc(12);
  header.writeBigUInt64LE(BigInt(data.length), 0);
  header.writeUInt32LE(maskedCrc32c(header.subarray(0, 8)), 8);
  const footer = Buffer.alloc(4);
  footer.writeUInt32LE(maskedCrc32c(data), 0);
  return Buffer.concat([header, data, footer]);
}
