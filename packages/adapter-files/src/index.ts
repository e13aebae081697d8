export { versionFromProto, versionToProto, AdapterVersionError } from "./adapter-version.js";
export { MISSING_ADAPTER_HEADER } from "./missing-adapter.js";
export {
  ADAPTERS_DIR,
  CHECKPOINTS_DIR,
  CHECKPOINT_ADAPTER_DIR,
  adapterName,
  checkpointName,
  parseAdapterName,
  parseCheckpointName,
} from "./artifact-names.js";
export { AdapterTransferError, type TransferProblem } from "./adapter-transfer-error.js";
export {
  exportAdapterEnvelope,
  loadAdapterEnvelope,
  type AdapterEnvelope,
  type AdapterHeader,
  type AdapterPart,
} from "./adapter-envelope.js";
export { adapterMessages, DEFAULT_CHUNK_SIZE, type AdapterFile } from "./send-adapter.js";
export { readAdapterDir, type AdapterDirectoryReader } from "./read-adapter-dir.js";
export { AdapterDirWriter, DEFAULT_TRANSFER_LIMITS, type AdapterDirectory, type TransferLimits } from "./adapter-dir-writer.js";
export { receiveAdapter } from "./receive-adapter.js";
