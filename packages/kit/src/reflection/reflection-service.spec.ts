import { create, createFileRegistry, fromBinary, type DescService } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  type FileDescriptorProto,
} from "@bufbuild/protobuf/wkt";
import { createClient, createRouterTransport, type ServiceImpl } from "@connectrpc/connect";
import { Health } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import {
  ExtensionRequestSchema,
  ServerReflection,
  type ServerReflectionRequest,
  type ServerReflectionResponse,
} from "@lean-grpo/gen/grpc/reflection/v1/reflection_pb";
import { ServerReflection as ServerReflectionV1alpha } from "@lean-grpo/gen/grpc/reflection/v1alpha/reflection_pb";
import { RewardService } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { LeanVerifierService } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { describe, expect, it } from "vitest";
import { createReflectionServices } from "./reflection-service.js";

type MessageRequest = ServerReflectionRequest["messageRequest"];

function transportFor(services: DescService[]) {
  return createRouterTransport((router) => {
    for (const { service, impl } of createReflectionServices(services)) {
      router.service(service, impl as ServiceImpl<DescService>);
    }
  });
}

/** Sends the requests on one stream and collects the answers. */
async function ask(services: DescService[], ...requests: MessageRequest[]): Promise<ServerReflectionResponse[]> {
  const client = createClient(ServerReflection, transportFor(services));
  async function* send() {
    for (const messageRequest of requests) yield { host: "localhost", messageRequest };
  }
  const responses: ServerReflectionResponse[] = [];
  for await (const response of client.serverReflectionInfo(send())) responses.push(response);
  return responses;
}

async function askOne(services: DescService[], request: MessageRequest): Promise<ServerReflectionResponse> {
  const [response] = await ask(services, request);
  if (!response) throw new Error("no response");
  return response;
}

function decodedFiles(response: ServerReflectionResponse): FileDescriptorProto[] {
  if (response.messageResponse.case !== "fileDescriptorResponse") {
    throw new Error(`expected files, got ${response.messageResponse.case}`);
  }
  return response.messageResponse.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b));
}

/** A proto2 file with an extension, since the project's protos declare none. */
function extensionService(): DescService {
  const proto = create(FileDescriptorProtoSchema, {
    name: "test/ext.proto",
    package: "test",
    syntax: "proto2",
    messageType: [{ name: "Base", extensionRange: [{ start: 100, end: 200 }] }],
    extension: [
      {
        name: "tag",
        number: 100,
        label: FieldDescriptorProto_Label.OPTIONAL,
        type: FieldDescriptorProto_Type.INT32,
        extendee: ".test.Base",
      },
    ],
    service: [{ name: "Svc", method: [{ name: "Ping", inputType: ".test.Base", outputType: ".test.Base" }] }],
  });
  const service = createFileRegistry(proto, () => undefined).getService("test.Svc");
  if (!service) throw new Error("test.Svc did not build");
  return service;
}

function extension(containingType: string, extensionNumber: number) {
  return create(ExtensionRequestSchema, { containingType, extensionNumber });
}

const served = [LeanVerifierService, Health];

describe("server reflection", () => {
  it("lists the registered services and the reflection services", async () => {
    const response = await askOne(served, { case: "listServices", value: "" });
    expect(response.messageResponse.case).toBe("listServicesResponse");
    const names = response.messageResponse.case === "listServicesResponse" ? response.messageResponse.value.service.map((s) => s.name) : [];
    expect(names.sort()).toEqual(
      [
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
        "leangrpo.v1.LeanVerifierService",
      ].sort(),
    );
  });

  it("echoes host and original request in every response", async () => {
    const request: MessageRequest = { case: "fileContainingSymbol", value: "leangrpo.v1.LeanVerifierService" };
    const response = await askOne(served, request);
    expect(response.validHost).toBe("localhost");
    expect(response.originalRequest?.messageRequest).toEqual(request);
  });

  it("returns the file of a service with its imports, and they build a registry", async () => {
    const response = await askOne(served, { case: "fileContainingSymbol", value: "leangrpo.v1.LeanVerifierService" });
    const files = decodedFiles(response);
    expect(files.map((f) => f.name)).toEqual(["leangrpo/v1/verifier.proto", "leangrpo/v1/common.proto"]);
    expect(files[0]?.dependency).toEqual(["leangrpo/v1/common.proto"]);

    // Resolve imports by name, as clients do: the requested file comes first, not last.
    const [verifier] = files;
    const registry = createFileRegistry(verifier!, (name) => files.find((f) => f.name === name));
    const service = registry.getService("leangrpo.v1.LeanVerifierService");
    expect(service?.methods.map((m) => m.name)).toContain("Verify");
    expect(registry.getMessage("leangrpo.v1.Theorem")?.fields.length).toBeGreaterThan(0);
  });

  it("resolves methods, enums and nested types to their file", async () => {
    const responses = await ask(
      served,
      { case: "fileContainingSymbol", value: "leangrpo.v1.LeanVerifierService.Verify" },
      { case: "fileContainingSymbol", value: "leangrpo.v1.Verdict" },
      { case: "fileContainingSymbol", value: "grpc.health.v1.HealthCheckResponse.ServingStatus" },
    );
    expect(responses.map((r) => decodedFiles(r)[0]?.name)).toEqual([
      "leangrpo/v1/verifier.proto",
      "leangrpo/v1/verifier.proto",
      "grpc/health/v1/health.proto",
    ]);
  });

  it("returns a file by name", async () => {
    const response = await askOne(served, { case: "fileByFilename", value: "leangrpo/v1/common.proto" });
    const [file] = decodedFiles(response);
    expect(file?.package).toBe("leangrpo.v1");
    expect(file?.messageType.map((m) => m.name)).toContain("Theorem");
  });

  it("includes well-known imports, each file once", async () => {
    const response = await askOne([RewardService], { case: "fileByFilename", value: "leangrpo/v1/reward.proto" });
    const names = decodedFiles(response).map((f) => f.name);
    expect(names[0]).toBe("leangrpo/v1/reward.proto");
    expect(names).toContain("google/protobuf/struct.proto");
    // common.proto is imported by both reward.proto and verifier.proto.
    expect(names.filter((n) => n === "leangrpo/v1/common.proto")).toHaveLength(1);
  });

  it("answers unknown names with NOT_FOUND in-band and keeps the stream open", async () => {
    const responses = await ask(
      served,
      { case: "fileContainingSymbol", value: "leangrpo.v1.Nope" },
      { case: "fileByFilename", value: "nope.proto" },
      { case: "listServices", value: "" },
    );
    expect(responses.map((r) => r.messageResponse.case)).toEqual(["errorResponse", "errorResponse", "listServicesResponse"]);
    const error = responses[0]?.messageResponse;
    expect(error?.case === "errorResponse" && error.value.errorCode).toBe(5);
  });

  it("finds extensions by extendee and number", async () => {
    const services = [extensionService()];
    const [byExtension, numbers, unknownType, unknownNumber] = await ask(
      services,
      { case: "fileContainingExtension", value: extension("test.Base", 100) },
      { case: "allExtensionNumbersOfType", value: "test.Base" },
      { case: "allExtensionNumbersOfType", value: "test.Nope" },
      { case: "fileContainingExtension", value: extension("test.Base", 101) },
    );
    expect(decodedFiles(byExtension!)[0]?.name).toBe("test/ext.proto");
    expect(numbers?.messageResponse).toMatchObject({
      case: "allExtensionNumbersResponse",
      value: { baseTypeName: "test.Base", extensionNumber: [100] },
    });
    expect(unknownType?.messageResponse).toMatchObject({ case: "errorResponse", value: { errorCode: 5 } });
    expect(unknownNumber?.messageResponse).toMatchObject({ case: "errorResponse", value: { errorCode: 5 } });
  });

  it("answers on v1alpha too", async () => {
    const client = createClient(ServerReflectionV1alpha, transportFor(served));
    async function* send() {
      yield { host: "h", messageRequest: { case: "fileContainingSymbol" as const, value: "leangrpo.v1.Verdict" } };
    }
    const responses = [];
    for await (const response of client.serverReflectionInfo(send())) responses.push(response);
    expect(responses).toHaveLength(1);
    const answer = responses[0]?.messageResponse;
    expect(answer?.case).toBe("fileDescriptorResponse");
    const first = answer?.case === "fileDescriptorResponse" ? answer.value.fileDescriptorProto[0] : undefined;
    expect(fromBinary(FileDescriptorProtoSchema, first!).name).toBe("leangrpo/v1/verifier.proto");
    expect(responses[0]?.originalRequest?.$typeName).toBe("grpc.reflection.v1alpha.ServerReflectionRequest");
  });
});
