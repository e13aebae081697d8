export { createVerifierService, type VerifierService, type VerifierServiceOptions } from "./service.js";
export { VerifierConfigSchema, type VerifierConfig } from "./config.js";
