# syntax=docker/dockerfile:1.7
# Images of the lean-grpo services: one build stage shared by all, one small
# runtime target per service. Build from the repository root:
#   docker build -f deploy/docker/service.Dockerfile --target reward -t lean-grpo/reward .
# The verifier target has no Lean toolchain (useful for the API only); the image
# that checks proofs is deploy/docker/lean-verifier.Dockerfile.
ARG NODE_VERSION=20.20.2

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
# Manifests first, so dependency layers are cached across source changes.
COPY package.json package-lock.json .npmrc ./
COPY gen/ts/package.json gen/ts/
COPY services/kit/package.json services/kit/
COPY services/inference/package.json services/inference/
COPY services/verifier/package.json services/verifier/
COPY services/reward/package.json services/reward/
COPY services/learner/package.json services/learner/
COPY services/orchestrator/package.json services/orchestrator/
COPY tests/package.json tests/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY tsconfig.base.json ./
COPY gen gen
COPY services services
COPY configs configs
# Test files stay out of the runtime image.
RUN find services -name '*.spec.ts' -delete && rm -rf services/*/test

# Distroless: no shell, no package manager, runs as uid 65532 (nonroot).
FROM gcr.io/distroless/nodejs20-debian12:nonroot AS runtime
WORKDIR /app
COPY --from=build --chown=65532:65532 /app /app
ENV NODE_ENV=production LOG_LEVEL=info
USER 65532:65532

FROM runtime AS inference
EXPOSE 50051
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s CMD ["/nodejs/bin/node", "--import", "tsx", "services/kit/src/bin/health-probe.ts", "127.0.0.1:50051"]
CMD ["services/orchestrator/bin/lean-grpo.mjs", "serve", "inference", "--config", "configs/deploy/inference.yaml"]

FROM runtime AS verifier
EXPOSE 50052
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s CMD ["/nodejs/bin/node", "--import", "tsx", "services/kit/src/bin/health-probe.ts", "127.0.0.1:50052"]
CMD ["services/orchestrator/bin/lean-grpo.mjs", "serve", "verifier", "--config", "configs/deploy/verifier.yaml"]

FROM runtime AS reward
EXPOSE 50053
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s CMD ["/nodejs/bin/node", "--import", "tsx", "services/kit/src/bin/health-probe.ts", "127.0.0.1:50053"]
CMD ["services/orchestrator/bin/lean-grpo.mjs", "serve", "reward", "--config", "configs/deploy/reward.yaml"]

FROM runtime AS learner
EXPOSE 50054
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s CMD ["/nodejs/bin/node", "--import", "tsx", "services/kit/src/bin/health-probe.ts", "127.0.0.1:50054"]
CMD ["services/orchestrator/bin/lean-grpo.mjs", "serve", "learner", "--config", "configs/deploy/learner.yaml"]

FROM runtime AS orchestrator
EXPOSE 50055
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s CMD ["/nodejs/bin/node", "--import", "tsx", "services/kit/src/bin/health-probe.ts", "127.0.0.1:50055"]
CMD ["services/orchestrator/bin/lean-grpo.mjs", "serve", "orchestrator", "--config", "configs/deploy/orchestrator.yaml"]
