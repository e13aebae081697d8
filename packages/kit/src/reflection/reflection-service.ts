import { toBinary, type DescFile, type DescService } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import { ServerReflection as ServerReflectionV1 } from "@lean-grpo/gen/grpc/reflection/v1/reflection_pb";
import { ServerReflection as ServerReflectionV1alpha } from "@lean-grpo/gen/grpc/reflection/v1alpha/reflection_pb";
import { DescriptorIndex } from "./descriptor-index.js";

/**
 * What v1 and v1alpha requests have in common. Their messages are wire-identical and
 * differ only in package, so the logic below is written once against this shape.
 */
type ReflectionRequest = {
  host: string;
  messageRequest:
    | {
        case: "fileByFilename" | "fileContainingSymbol" | "allExtensionNumbersOfType" | "listServices";
        value: string;
      }
    | { case: "fileContainingExtension"; value: { containingType: string; extensionNumber: number } }
    | { case: undefined; value?: undefined };
};

/** The `message_response` oneof, as an init shape both versions accept. */
type ReflectionAnswer =
  | { case: "fileDescriptorResponse"; value: { fileDescriptorProto: Uint8Array[] } }
  | { case: "allExtensionNumbersResponse"; value: { baseTypeName: string; extensionNumber: number[] } }
  | { case: "listServicesResponse"; value: { service: { name: string }[] } }
  | { case: "errorResponse"; value: { errorCode: number; errorMessage: string } };

/**
 * gRPC server reflection (grpc.reflection.v1 and v1alpha: grpcurl, Postman and older
 * clients still ask for v1alpha) over the files of the given services, the reflection
 * services themselves and everything they import.
 */
// biome-ignore lint/suspicious/noExplicitAny: registrations of different services share one array
export function createReflectionServices(services: DescService[]): Array<{ service: DescService; impl: ServiceImpl<any> }> {
  const reflection = [ServerReflectionV1, ServerReflectionV1alpha];
  const index = new DescriptorIndex([...services, ...reflection]);
  const names = [...new Set([...services, ...reflection].map((s) => s.typeName))];
  const answer = (request: ReflectionRequest) => answerRequest(index, names, request);

  async function* serverReflectionInfo(requests: AsyncIterable<ReflectionRequest>) {
    for await (const request of requests) {
      // The spec asks every response to echo the host and the request it answers.
      yield { validHost: request.host, originalRequest: request, messageResponse: answer(request) };
    }
  }
  const v1: ServiceImpl<typeof ServerReflectionV1> = { serverReflectionInfo };
  const v1alpha: ServiceImpl<typeof ServerReflectionV1alpha> = { serverReflectionInfo };
  return [
    { service: ServerReflectionV1, impl: v1 },
    { service: ServerReflectionV1alpha, impl: v1alpha },
  ];
}

function answerRequest(index: DescriptorIndex, serviceNames: string[], { messageRequest: req }: ReflectionRequest): ReflectionAnswer {
  switch (req.case) {
    case "fileByFilename":
      return files(index, index.fileByName(req.value), `file ${req.value}`);
    case "fileContainingSymbol":
      return files(index, index.fileBySymbol(req.value), `symbol ${req.value}`);
    case "fileContainingExtension": {
      const { containingType, extensionNumber } = req.value;
      const file = index.fileByExtension(containingType, extensionNumber);
      return files(index, file, `extension ${extensionNumber} of ${containingType}`);
    }
    case "allExtensionNumbersOfType": {
      const numbers = index.extensionNumbers(req.value);
      if (!numbers) return notFound(`type ${req.value}`);
      return { case: "allExtensionNumbersResponse", value: { baseTypeName: req.value, extensionNumber: numbers } };
    }
    case "listServices":
      return { case: "listServicesResponse", value: { service: serviceNames.map((name) => ({ name })) } };
    case undefined:
      return {
        case: "errorResponse",
        value: { errorCode: Code.InvalidArgument, errorMessage: "empty reflection request" },
      };
  }
}

function files(index: DescriptorIndex, file: DescFile | undefined, what: string): ReflectionAnswer {
  if (!file) return notFound(what);
  const fileDescriptorProto = index.withDependencies(file).map((f) => toBinary(FileDescriptorProtoSchema, f.proto));
  return { case: "fileDescriptorResponse", value: { fileDescriptorProto } };
}

function notFound(what: string): ReflectionAnswer {
  // Reported in-band: an error status would end the stream and the client's session.
  return { case: "errorResponse", value: { errorCode: Code.NotFound, errorMessage: `${what} not found` } };
}
