export { createVerifierService } from "./service.js";
export { VerifierConfigSchema, type VerifierConfig } from "./config.js";
