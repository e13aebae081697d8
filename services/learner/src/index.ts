export { createLearnerService } from "./service.js";
export { LearnerConfigSchema, type LearnerConfig } from "./config.js";
