export { createOrchestratorService } from "./service.js";
export { OrchestratorConfigSchema, type OrchestratorConfig } from "./config.js";
