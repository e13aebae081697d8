# syntax=docker/dockerfile:1.7
# The verifier that checks proofs: lean-grpo's verifier service with elan, the Lean
# toolchain a pinned Mathlib release asks for, Mathlib's prebuilt cache, and
# leanprover-community/repl built at the tag of that toolchain. Build from the
# repository root (needs network: GitHub, and Mathlib's cache servers):
#   docker build -f deploy/docker/lean-verifier.Dockerfile -t lean-grpo/lean-verifier .
#   docker build -f deploy/docker/lean-verifier.Dockerfile --build-arg MATHLIB_TAG=v4.27.0 ...
# This image was written without being built (the development machine has no route
# to GitHub or the cache servers); treat the first build as its test.
ARG NODE_VERSION=20.20.2
# A Mathlib release tag. Its lean-toolchain names the Lean release, and the REPL is
# built at the tag of the same name: .olean files only load in the Lean that wrote them.
ARG MATHLIB_TAG=v4.26.0
ARG ELAN_VERSION=v4.1.2
# The turbo of the root package.json's devDependencies (tests/deploy checks they match).
ARG TURBO_VERSION=2.11.9

# --- Lean, Mathlib and the REPL ------------------------------------------------
FROM debian:bookworm-slim AS lean
ARG MATHLIB_TAG
ARG ELAN_VERSION
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl git xz-utils \
 && rm -rf /var/lib/apt/lists/*
ENV ELAN_HOME=/opt/elan PATH=/opt/elan/bin:$PATH
RUN curl -sSfL "https://raw.githubusercontent.com/leanprover/elan/${ELAN_VERSION}/elan-init.sh" -o /tmp/elan-init.sh \
 && sh /tmp/elan-init.sh -y --default-toolchain none --no-modify-path \
 && rm /tmp/elan-init.sh
RUN git clone --depth 1 --branch "${MATHLIB_TAG}" https://github.com/leanprover-community/mathlib4.git /opt/mathlib4
WORKDIR /opt/mathlib4
# The toolchain Mathlib pins (e.g. leanprover/lean4:v4.26.0), as the default.
RUN elan toolchain install "$(cat lean-toolchain)" && elan default "$(cat lean-toolchain)"
# Prebuilt .olean files (~5 GB) instead of hours of compiling; `lake build` then
# only confirms that nothing is missing.
RUN lake exe cache get && lake build
# The REPL has no Lake dependencies; its tags follow Lean's releases.
RUN git clone --depth 1 --branch "$(sed 's/.*://' lean-toolchain)" https://github.com/leanprover-community/repl.git /opt/repl \
 && cd /opt/repl && lake build
# Smoke test: the REPL runs inside the Mathlib project and answers a command.
RUN printf '{"cmd": "theorem smoke : 1 + 1 = 2 := rfl"}\n\n' | lake env /opt/repl/.lake/build/bin/repl | grep -q '"env"'

# --- the service's JavaScript: the verifier and the workspaces it runs with -------
# As in deploy/docker/service.Dockerfile: deploy/docker/prune.sh cuts the repository
# down to the verifier (turbo prune), then a production install of what is left.
FROM node:${NODE_VERSION}-bookworm-slim AS prune
ARG TURBO_VERSION
ENV TURBO_TELEMETRY_DISABLED=1
RUN npm install --global --no-audit --no-fund "turbo@${TURBO_VERSION}"
WORKDIR /repo
COPY . .
RUN sh deploy/docker/prune.sh verifier /out/verifier

FROM node:${NODE_VERSION}-bookworm-slim AS app
WORKDIR /app
COPY --from=prune /out/verifier/json/ ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY --from=prune /out/verifier/full/ ./

# --- runtime ----------------------------------------------------------------------
FROM node:${NODE_VERSION}-bookworm-slim
# util-linux: unshare (workers get no network where the runtime permits namespaces)
# and prlimit (resource limits); git: Lake reads package revisions.
RUN apt-get update \
 && apt-get install -y --no-install-recommends util-linux git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 65532 nonroot \
 && useradd --uid 65532 --gid 65532 --create-home --home-dir /home/nonroot nonroot
# Owned by root: the REPL workers (and code they run) cannot change the toolchain,
# Mathlib's .olean files or the service.
COPY --from=lean /opt/elan /opt/elan
COPY --from=lean /opt/mathlib4 /opt/mathlib4
COPY --from=lean /opt/repl /opt/repl
COPY --from=app /app /app
COPY deploy/k8s/base/config/verifier.yaml /etc/lean-grpo/verifier.yaml
ENV ELAN_HOME=/opt/elan \
    PATH=/opt/elan/bin:$PATH \
    NODE_ENV=production \
    LOG_LEVEL=info \
    LEAN_REPL_CMD="lake env /opt/repl/.lake/build/bin/repl" \
    LEAN_REPL_CWD=/opt/mathlib4 \
    LEANGRPO_VERIFIER_REPL__DEFAULT_HEADER="import Mathlib" \
    LEANGRPO_VERIFIER_REPL__WARM_HEADERS="[import Mathlib]"
USER 65532:65532
WORKDIR /app
EXPOSE 50052
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s CMD ["node", "--import", "tsx", "services/kit/src/bin/health-probe.ts", "127.0.0.1:50052"]
# As the distroless images of deploy/docker/service.Dockerfile: node is the entry
# point, so deploy/k8s's `args` (the verifier's own server.ts) work with either image.
ENTRYPOINT ["node"]
CMD ["--import", "tsx", "services/verifier/src/server.ts", "--config", "/etc/lean-grpo/verifier.yaml"]
