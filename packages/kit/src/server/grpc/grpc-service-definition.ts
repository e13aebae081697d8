// A protobuf service as grpc-js wants it: the HTTP path, the call shape and the
// (de)serializers of each method, from the same descriptors connect-node uses.
import { create, fromBinary, isMessage, toBinary, type DescMessage, type DescService } from "@bufbuild/protobuf";
import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js";

export function grpcServiceDefinition(service: DescService): ServiceDefinition {
  const definition: Record<string, MethodDefinition<unknown, unknown>> = {};
  for (const method of service.methods) {
    definition[method.localName] = {
      path: `/${service.typeName}/${method.name}`,
      requestStream: method.methodKind === "client_streaming" || method.methodKind === "bidi_streaming",
      responseStream: method.methodKind === "server_streaming" || method.methodKind === "bidi_streaming",
      requestDeserialize: (bytes: Buffer) => parse(method.input, bytes),
      requestSerialize: (message: unknown) => serialize(method.input, message),
      responseSerialize: (message: unknown) => serialize(method.output, message),
      responseDeserialize: (bytes: Buffer) => parse(method.output, bytes),
    };
  }
  return definition;
}

function parse(schema: DescMessage, bytes: Buffer) {
  try {
    return fromBinary(schema, bytes);
  } catch (error) {
    // grpc-js answers INTERNAL with this text, as connect-node does for an unparsable message.
    throw new Error(`parse binary: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Handlers may return a message or its init shape, as connect allows. */
function serialize(schema: DescMessage, message: unknown): Buffer {
  const full = isMessage(message, schema) ? message : create(schema, message as never);
  const bytes = toBinary(schema, full);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
