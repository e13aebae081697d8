// @lean-grpo/kit: what every service of the mesh shares.
export { serve, serviceRegistration, type ServeOptions, type RunningServer, type ServiceRegistration } from "./server/serve.js";
export { runService, type RunServiceOptions } from "./server/run-service.js";
export { ExposureError, requireSafeExposure } from "./server/exposure.js";
export { surviveUnhandledRejections, unhandledRejectionCount } from "./server/unhandled-rejections.js";
export { ServerConfigSchema, type ServerConfig, type ServerConfigInput, type ServerLimits } from "./server/server-config.js";
export { HealthRegistry } from "./health/health-service.js";
export { rpcClientTracing } from "./telemetry/rpc-tracing.js";
export { setupTracing, shutdownTracing, type TracingSetup } from "./telemetry/setup-tracing.js";
export { inActiveSpan } from "./telemetry/active-span.js";
export {
  mapDomainError,
  toConnectError,
  type DomainErrorMapping,
  type ErrorClass,
  type ErrorCodeRule,
} from "./errors/domain-error-mapping.js";
export { wrapServiceImpl, type ServicePipelineOptions } from "./server/calls/service-pipeline.js";
export { bearerToken, digest as tokenDigest, tokensEqual } from "./auth/bearer-auth.js";
export {
  AUTH_TOKEN_ENV,
  agreedMeshToken,
  callerAuth,
  envAuthToken,
  isLoopbackHost,
  requireAuthBeyondLoopback,
  type ConfiguredToken,
} from "./auth/mesh-token.js";
export * from "./config/index.js";
export * from "./client/index.js";
export * from "./paths/index.js";
export { createLogger, configureLogDestination, logDestination, logFile, type LogDestination } from "./log.js";
export { PROOF_FORMAT_NAMES, proofFormatField, proofFormatName, type ProofFormatName } from "./theorem/proof-format.js";
