export { createInferenceService } from "./service.js";
export { InferenceConfigSchema, type InferenceConfig } from "./config.js";
