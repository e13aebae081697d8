// The reasoning vocabulary (docs/concepts/reasoning-vocabulary.md): settings, the map and its
// file, the markers, the mask on token ids and the mapped text. Loads no tfjs.
export {
  DEFAULT_REASONING_MARKERS,
  REASONING_MASK_MODES,
  REASONING_OFF,
  reasoningEnabled,
  validateReasoningSettings,
  type ReasoningMaskMode,
  type ReasoningSettings,
} from "./reasoning-settings.js";
export { ReasoningTokenMap, defaultReasoningMap, reasoningMapHash } from "./reasoning-map.js";
export {
  REASONING_MAP_FILE,
  REASONING_MAP_FORMAT,
  checkSameReasoningMap,
  parseReasoningMap,
  readReasoningMapFile,
  serializeReasoningMap,
  writeReasoningMapFile,
  type ReasoningMapFileContents,
} from "./reasoning-map-file.js";
export {
  ReasoningVocabulary,
  markerIds,
  resolveReasoningVocabulary,
  type MarkerTokenizer,
  type ReasoningMarkers,
  type ResolveReasoningOptions,
} from "./reasoning-vocabulary.js";
export {
  ReasoningBlockTracker,
  blockStates,
  isAllowed,
  maskLogitsRow,
  restricts,
  type BlockState,
} from "./reasoning-mask.js";
export {
  decodeReasoningCompletion,
  reasoningTrace,
  type DecodedCompletion,
  type ReasoningTrace,
  type TextDecoder,
  type TextSpan,
} from "./reasoning-text.js";
export { ReasoningVocabError } from "../errors.js";
export * from "./reasoning-config-keys.js";
