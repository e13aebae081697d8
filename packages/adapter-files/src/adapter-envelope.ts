// An adapter travels as a header listing its files, then FileChunks, inside one of two
// oneofs: ExportAdapterResponse (manifest | chunk) from the learner and LoadAdapterRequest
// (source | chunk) to the inference service. An envelope wraps and opens one of them, so
// sending and receiving are written once.
import { create } from "@bufbuild/protobuf";
import type { FileChunk, FileInfo } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { LoadAdapterRequestSchema, type LoadAdapterRequest } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { ExportAdapterResponseSchema, type ExportAdapterResponse } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { AdapterTransferError } from "./adapter-transfer-error.js";
import { AdapterVersionError, versionFromProto, versionToProto } from "./adapter-version.js";
import { adapterName } from "./artifact-names.js";

/** What a header says, whichever envelope carried it. */
export interface AdapterHeader {
  name: string;
  version: number;
  files: FileInfo[];
}

export type AdapterPart = { case: "header"; value: AdapterHeader } | { case: "chunk"; value: FileChunk };

export interface AdapterEnvelope<Message, HeaderFields> {
  /** The header's field in the oneof ("manifest", "source"), for error messages. */
  readonly headerField: string;
  header(fields: HeaderFields, files: FileInfo[]): Message;
  chunk(chunk: FileChunk): Message;
  /** The part a message carries; throws AdapterTransferError for an empty oneof or a bad version. */
  open(message: Message): AdapterPart;
}

/** ExportAdapter's stream; the manifest's name is derived from the version. */
export const exportAdapterEnvelope: AdapterEnvelope<ExportAdapterResponse, { version: number; baseModel: string }> = {
  headerField: "manifest",
  header: ({ version, baseModel }, files) =>
    create(ExportAdapterResponseSchema, {
      part: { case: "manifest", value: { name: adapterName(version), version: versionToProto(version), baseModel, files } },
    }),
  chunk: (chunk) => create(ExportAdapterResponseSchema, { part: { case: "chunk", value: chunk } }),
  open: (message) => openPart("manifest", message.part),
};

/** LoadAdapter's stream with the files as chunks (no source.path); the name is derived from the version. */
export const loadAdapterEnvelope: AdapterEnvelope<LoadAdapterRequest, { version: number }> = {
  headerField: "source",
  header: ({ version }, files) =>
    create(LoadAdapterRequestSchema, {
      part: { case: "source", value: { name: adapterName(version), version: versionToProto(version), path: "", files } },
    }),
  chunk: (chunk) => create(LoadAdapterRequestSchema, { part: { case: "chunk", value: chunk } }),
  open: (message) => openPart("source", message.part),
};

type HeaderField = "manifest" | "source";

type ProtoPart =
  | { case: HeaderField; value: { name: string; version: bigint; files: FileInfo[] } }
  | { case: "chunk"; value: FileChunk }
  | { case: undefined; value?: undefined };

function openPart(headerField: HeaderField, part: ProtoPart): AdapterPart {
  if (part.case === undefined) throw new AdapterTransferError(`a message with neither \`${headerField}\` nor \`chunk\` set`, "invalid");
  if (part.case === "chunk") return { case: "chunk", value: part.value };
  const { name, version, files } = part.value;
  try {
    return { case: "header", value: { name, version: versionFromProto(version), files } };
  } catch (error) {
    if (error instanceof AdapterVersionError) throw new AdapterTransferError(`${headerField}.version: ${error.message}`, "invalid");
    throw error;
  }
}
