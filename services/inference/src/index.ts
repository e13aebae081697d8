export { createInferenceService, type InferenceServiceOptions } from "./service.js";
export { InferenceConfigSchema, type InferenceConfig } from "./config.js";
export { tokenizeLocally } from "./backend/tokenize-locally.js";
