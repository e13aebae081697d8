# syntax=docker/dockerfile:1.7
# One image per lean-grpo service. Each holds only its service compiled to JavaScript
# (services/<service>/dist/server.mjs: its src/server.ts and the workspaces it runs
# with, cut out of the monorepo by `turbo prune` through deploy/docker/prune.sh, then
# bundled by esbuild through deploy/docker/bundle-service.mjs) and the production npm
# packages it imports: no TypeScript and no tsx at run time. Build from the repository
# root, one target per service:
#   docker build -f deploy/docker/service.Dockerfile --target reward -t lean-grpo/reward .
# Targets: inference, verifier, reward, learner, orchestrator. The inference and learner
# images also hold the shipped model (models/arith-tiny, /app/models/arith-tiny), which
# their configs in deploy/k8s/base/config name: the CPU default trains with no volume for
# a model; the orchestrator's holds the shipped datasets under its data_root, /data. The
# verifier target has
# no Lean toolchain (math answers and the API only); the verifier that checks proofs
# is deploy/docker/lean-verifier.Dockerfile.
ARG NODE_VERSION=20.20.2
# The turbo of the root package.json's devDependencies (tests/deploy checks they match).
ARG TURBO_VERSION=2.11.9

# --- prune: the repository cut down to each service ---------------------------------
# The only stage that sees the whole build context; later stages copy from /out only.
FROM node:${NODE_VERSION}-bookworm-slim AS prune
ARG TURBO_VERSION
ENV TURBO_TELEMETRY_DISABLED=1
RUN npm install --global --no-audit --no-fund "turbo@${TURBO_VERSION}"
WORKDIR /repo
COPY . .
RUN sh deploy/docker/prune.sh inference /out/inference
RUN sh deploy/docker/prune.sh verifier /out/verifier
RUN sh deploy/docker/prune.sh reward /out/reward
RUN sh deploy/docker/prune.sh learner /out/learner
RUN sh deploy/docker/prune.sh orchestrator /out/orchestrator

# --- build: each service compiled to JavaScript ------------------------------------
# A full install of the cut (the root's devDependencies bring esbuild, through tsx), then
# deploy/docker/bundle-service.mjs writes services/<service>/dist/{server,health-probe}.mjs.
# Only those two files leave this stage. --ignore-scripts: esbuild finds its binary
# through its platform package.
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app

FROM build AS inference-build
COPY --from=prune /out/inference/json/ ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY --from=prune /out/inference/full/ ./
RUN node deploy/docker/bundle-service.mjs inference

FROM build AS verifier-build
COPY --from=prune /out/verifier/json/ ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY --from=prune /out/verifier/full/ ./
RUN node deploy/docker/bundle-service.mjs verifier

FROM build AS reward-build
COPY --from=prune /out/reward/json/ ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY --from=prune /out/reward/full/ ./
RUN node deploy/docker/bundle-service.mjs reward

FROM build AS learner-build
COPY --from=prune /out/learner/json/ ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY --from=prune /out/learner/full/ ./
RUN node deploy/docker/bundle-service.mjs learner

FROM build AS orchestrator-build
COPY --from=prune /out/orchestrator/json/ ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY --from=prune /out/orchestrator/full/ ./
RUN node deploy/docker/bundle-service.mjs orchestrator

# --- install: production dependencies from the pruned lockfile, then the bundles -----
# Manifests first: the npm ci layer is reused until a package.json or the lockfile
# changes. No dependency needs its install script at run time.
FROM node:${NODE_VERSION}-bookworm-slim AS install
WORKDIR /app

FROM install AS inference-app
COPY --from=prune /out/inference/json/ ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY --from=inference-build /app/services/inference/dist/ services/inference/dist/

FROM install AS verifier-app
COPY --from=prune /out/verifier/json/ ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY --from=verifier-build /app/services/verifier/dist/ services/verifier/dist/

FROM install AS reward-app
COPY --from=prune /out/reward/json/ ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY --from=reward-build /app/services/reward/dist/ services/reward/dist/

FROM install AS learner-app
COPY --from=prune /out/learner/json/ ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY --from=learner-build /app/services/learner/dist/ services/learner/dist/

FROM install AS orchestrator-app
COPY --from=prune /out/orchestrator/json/ ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY --from=orchestrator-build /app/services/orchestrator/dist/ services/orchestrator/dist/

# --- mount points -------------------------------------------------------------------
# A named volume starts as a copy of the image's directory at its mount point, owner
# included: made here and owned by uid 65532, the service can write to a fresh volume
# (compose's runs, checkpoints, adapters); otherwise it would be root's.
FROM node:${NODE_VERSION}-bookworm-slim AS mount-points
RUN mkdir -p /mnt/runs /mnt/checkpoints /mnt/adapters

# --- runtime ------------------------------------------------------------------------
# Distroless: no shell, no package manager; node is the entry point, runs as uid 65532
# (nonroot). The application files stay owned by root, so the service cannot change them.
FROM gcr.io/distroless/nodejs20-debian12:nonroot AS runtime
WORKDIR /app
ENV NODE_ENV=production LOG_LEVEL=info
USER 65532:65532

FROM runtime AS inference
COPY --from=inference-app /app /app
# The shipped 1 M-parameter model (3.9 MB): the CPU default samples from it out of the box.
COPY models/arith-tiny /app/models/arith-tiny
COPY --from=mount-points --chown=65532:65532 /mnt/adapters /adapters
COPY deploy/k8s/base/config/inference.yaml /etc/lean-grpo/inference.yaml
EXPOSE 50051
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s CMD ["/nodejs/bin/node", "services/inference/dist/health-probe.mjs", "127.0.0.1:50051"]
CMD ["services/inference/dist/server.mjs", "--config", "/etc/lean-grpo/inference.yaml"]

FROM runtime AS verifier
COPY --from=verifier-app /app /app
COPY deploy/k8s/base/config/verifier.yaml /etc/lean-grpo/verifier.yaml
EXPOSE 50052
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s CMD ["/nodejs/bin/node", "services/verifier/dist/health-probe.mjs", "127.0.0.1:50052"]
CMD ["services/verifier/dist/server.mjs", "--config", "/etc/lean-grpo/verifier.yaml"]

FROM runtime AS reward
COPY --from=reward-app /app /app
COPY deploy/k8s/base/config/reward.yaml /etc/lean-grpo/reward.yaml
EXPOSE 50053
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s CMD ["/nodejs/bin/node", "services/reward/dist/health-probe.mjs", "127.0.0.1:50053"]
CMD ["services/reward/dist/server.mjs", "--config", "/etc/lean-grpo/reward.yaml"]

FROM runtime AS learner
COPY --from=learner-app /app /app
# The shipped model, the CPU default's base weights (the inference image holds the same files).
COPY models/arith-tiny /app/models/arith-tiny
COPY --from=mount-points --chown=65532:65532 /mnt/checkpoints /checkpoints
COPY --from=mount-points --chown=65532:65532 /mnt/adapters /adapters
COPY deploy/k8s/base/config/learner.yaml /etc/lean-grpo/learner.yaml
EXPOSE 50054
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s CMD ["/nodejs/bin/node", "services/learner/dist/health-probe.mjs", "127.0.0.1:50054"]
CMD ["services/learner/dist/server.mjs", "--config", "/etc/lean-grpo/learner.yaml"]

FROM runtime AS orchestrator
COPY --from=orchestrator-app /app /app
# The shipped datasets under data_root (/data): StartRun's dataset_path examples/arith.jsonl
# works out of the box; mount a folder of your own beside them (deploy/README.md).
COPY examples/*.jsonl /data/examples/
COPY --from=mount-points --chown=65532:65532 /mnt/runs /runs
COPY deploy/k8s/base/config/orchestrator.yaml /etc/lean-grpo/orchestrator.yaml
EXPOSE 50055
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s CMD ["/nodejs/bin/node", "services/orchestrator/dist/health-probe.mjs", "127.0.0.1:50055"]
CMD ["services/orchestrator/dist/server.mjs", "--config", "/etc/lean-grpo/orchestrator.yaml"]
