// A protobuf service as grpc-js wants it, for the bench's plain grpc-js server and its
// grpc-js client: each method's HTTP path, call shape and (de)serializers, from the same
// descriptors connect uses.
import { create, fromBinary, isMessage, toBinary, type DescMessage, type DescMethod, type DescService } from "@bufbuild/protobuf";
import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js";

export function protobufServiceDefinition(service: DescService): ServiceDefinition {
  return Object.fromEntries(service.methods.map((method) => [method.localName, protobufMethodDefinition(method)]));
}

export function protobufMethodDefinition(method: DescMethod): MethodDefinition<unknown, unknown> {
  return {
    path: `/${method.parent.typeName}/${method.name}`,
    requestStream: method.methodKind === "client_streaming" || method.methodKind === "bidi_streaming",
    responseStream: method.methodKind === "server_streaming" || method.methodKind === "bidi_streaming",
    requestSerialize: (message: unknown) => serialize(method.input, message),
    requestDeserialize: (bytes: Buffer) => fromBinary(method.input, bytes),
    responseSerialize: (message: unknown) => serialize(method.output, message),
    responseDeserialize: (bytes: Buffer) => fromBinary(method.output, bytes),
  };
}

/** Implementations may return a message or its init shape, as connect allows. */
function serialize(schema: DescMessage, message: unknown): Buffer {
  const bytes = toBinary(schema, isMessage(message, schema) ? message : create(schema, message as never));
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
