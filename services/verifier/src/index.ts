export { createVerifierService, type VerifierService, type VerifierServiceOptions } from "./service.js";
export { VerifierConfigSchema, type VerifierConfig } from "./config.js";
// The verdict's first tier on its own (the token screen): bench/verifier/screen.ts times it.
export { prepareProof } from "./verdict/proof-source.js";
export { theoremTarget } from "./verdict/theorem-target.js";
