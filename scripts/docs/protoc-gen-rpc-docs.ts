// protoc-gen-rpc-docs: a buf/protoc plugin that writes the RPC reference (docs/reference/rpc.md)
// from the contract: every service and method, every message with its fields, every enum with
// its values, each with the comment written above it in proto/. buf.gen.docs.yaml runs it:
//   npm run docs:rpc
// It reads the descriptors buf hands it (with their source comments), so the page cannot say
// anything the .proto files do not.
import {
  create,
  createFileRegistry,
  ScalarType,
  type DescEnum,
  type DescField,
  type DescFile,
  type DescMessage,
  type DescService,
} from "@bufbuild/protobuf";
import {
  CodeGeneratorResponse_Feature,
  CodeGeneratorResponseSchema,
  FileDescriptorSetSchema,
  type CodeGeneratorRequest,
} from "@bufbuild/protobuf/wkt";
import { getComments, runNodeJs, type Plugin } from "@bufbuild/protoplugin";

const PAGE = "rpc.md";

/** A comment as one paragraph (proto comments wrap at ~100 columns; the page reflows them). */
function commentOf(desc: Parameters<typeof getComments>[0]): string {
  const leading = getComments(desc).leading ?? "";
  return leading
    .split(/\n\s*\n/u)
    .map((paragraph) => paragraph.replace(/\s*\n\s*/gu, " ").trim())
    .filter(Boolean)
    .join("<br><br>");
}

/** Prose in a table cell or paragraph: HTML-escaped outside code spans, pipes escaped. */
function prose(text: string): string {
  return text
    .split("`")
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/&/gu, "&amp;").replace(/</gu, "&lt;").replace(/>/gu, "&gt;")))
    .join("`")
    .replace(/&lt;br&gt;&lt;br&gt;/gu, "<br><br>")
    .replace(/\|/gu, "\\|");
}

/** The anchor of a message or enum of the contract: its full name, dots as dashes. */
function anchor(typeName: string): string {
  return typeName.replace(/\./gu, "-").toLowerCase();
}

function typeLink(desc: DescMessage | DescEnum, documented: ReadonlySet<string>): string {
  const shortName = desc.typeName.replace(/^leangrpo\.v1\./u, "");
  return documented.has(desc.typeName) ? `[${shortName}](#${anchor(desc.typeName)})` : `\`${desc.typeName}\``;
}

/** A scalar's name as the .proto file writes it (uint32, string, bytes...). */
function scalar(type: ScalarType): string {
  return `\`${ScalarType[type].toLowerCase()}\``;
}

function fieldType(field: DescField, documented: ReadonlySet<string>): string {
  switch (field.fieldKind) {
    case "scalar":
      return `${field.proto.proto3Optional ? "optional " : ""}${scalar(field.scalar)}`;
    case "enum":
      return typeLink(field.enum, documented);
    case "message":
      return typeLink(field.message, documented);
    case "list":
      return `repeated ${field.listKind === "scalar" ? scalar(field.scalar) : typeLink(field.listKind === "enum" ? field.enum : field.message, documented)}`;
    case "map": {
      const value =
        field.mapKind === "scalar" ? scalar(field.scalar) : typeLink(field.mapKind === "enum" ? field.enum : field.message, documented);
      return `map&lt;${scalar(field.mapKey)}, ${value}&gt;`;
    }
  }
}

function messagesOf(file: DescFile): DescMessage[] {
  const walk = (messages: readonly DescMessage[]): DescMessage[] => messages.flatMap((m) => [m, ...walk(m.nestedMessages)]);
  return walk(file.messages);
}

function enumsOf(file: DescFile): DescEnum[] {
  const walk = (messages: readonly DescMessage[]): DescEnum[] => messages.flatMap((m) => [...m.nestedEnums, ...walk(m.nestedMessages)]);
  return [...file.enums, ...walk(file.messages)];
}

function serviceSection(service: DescService, documented: ReadonlySet<string>): string[] {
  const out = [`### ${service.name} {#${anchor(service.typeName)}}`, "", `\`${service.typeName}\` in \`${service.file.name}.proto\`.`, ""];
  const comment = commentOf(service);
  if (comment) out.push(prose(comment), "");
  out.push("| method | request | response | meaning |", "| --- | --- | --- | --- |");
  for (const method of service.methods) {
    const clientStream = method.methodKind === "client_streaming" || method.methodKind === "bidi_streaming";
    const serverStream = method.methodKind === "server_streaming" || method.methodKind === "bidi_streaming";
    out.push(
      `| \`${method.name}\` | ${clientStream ? "stream " : ""}${typeLink(method.input, documented)} | ${serverStream ? "stream " : ""}${typeLink(method.output, documented)} | ${prose(commentOf(method))} |`,
    );
  }
  out.push("");
  return out;
}

function messageSection(message: DescMessage, documented: ReadonlySet<string>): string[] {
  const out = [`### ${message.typeName.replace(/^leangrpo\.v1\./u, "")} {#${anchor(message.typeName)}}`, ""];
  const comment = commentOf(message);
  if (comment) out.push(prose(comment), "");
  if (message.fields.length === 0) return [...out, "No fields.", ""];
  out.push("| field | type | number | meaning |", "| --- | --- | --- | --- |");
  for (const field of message.fields) {
    const oneof = field.oneof ? ` (one of \`${field.oneof.name}\`)` : "";
    const deprecated = field.deprecated ? " **Deprecated.**" : "";
    out.push(`| \`${field.name}\` | ${fieldType(field, documented)} | ${field.number} | ${prose(commentOf(field))}${oneof}${deprecated} |`);
  }
  out.push("");
  return out;
}

function enumSection(desc: DescEnum): string[] {
  const out = [`### ${desc.typeName.replace(/^leangrpo\.v1\./u, "")} {#${anchor(desc.typeName)}}`, ""];
  const comment = commentOf(desc);
  if (comment) out.push(prose(comment), "");
  out.push("| value | number | meaning |", "| --- | --- | --- |");
  for (const value of desc.values) out.push(`| \`${value.name}\` | ${value.number} | ${prose(commentOf(value))} |`);
  out.push("");
  return out;
}

function page(files: readonly DescFile[]): string {
  const services = files.flatMap((f) => f.services);
  const messages = files.flatMap(messagesOf).filter((m) => !m.proto.options?.mapEntry);
  const enums = files.flatMap(enumsOf);
  const documented = new Set([...messages, ...enums].map((d) => d.typeName));
  const out = [
    "<!-- Generated by `npm run docs:rpc` (scripts/docs/protoc-gen-rpc-docs.ts) from proto/; do not edit. -->",
    "",
    "# RPC reference",
    "",
    "The contract every service speaks, package `leangrpo.v1`, read from `proto/leangrpo/v1/*.proto` with",
    "the comments written there. Each service also serves `grpc.health.v1.Health` and server",
    "reflection (v1 and v1alpha), so `buf curl` and `grpcurl` need no `.proto` files; see",
    "[Calling the services](../guide/clients.md).",
    "",
    "## Services",
    "",
    "::: v-pre",
    ...services.flatMap((s) => serviceSection(s, documented)),
    ":::",
    "",
    "## Messages",
    "",
    "::: v-pre",
    ...messages.flatMap((m) => messageSection(m, documented)),
    ":::",
    "",
    "## Enums",
    "",
    "::: v-pre",
    ...enums.flatMap(enumSection),
    ":::",
  ];
  return `${out.join("\n").trimEnd()}\n`;
}

const plugin: Plugin = {
  name: "protoc-gen-rpc-docs",
  version: "v1",
  run(request: CodeGeneratorRequest) {
    const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: request.protoFile }));
    const files = request.fileToGenerate.map((name) => {
      const file = registry.getFile(name);
      if (!file) throw new Error(`protoc-gen-rpc-docs: ${name} is not in the request`);
      return file;
    });
    return create(CodeGeneratorResponseSchema, {
      supportedFeatures: BigInt(CodeGeneratorResponse_Feature.PROTO3_OPTIONAL),
      file: [{ name: PAGE, content: page(files) }],
    });
  },
};

runNodeJs(plugin);
