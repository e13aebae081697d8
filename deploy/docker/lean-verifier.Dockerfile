# syntax=docker/dockerfile:1.7
# The verifier that checks proofs: lean-grpo's verifier service with elan, the Lean
# toolchain a pinned Mathlib release asks for, Mathlib's prebuilt cache,
# leanprover-community/repl built at the tag of that toolchain, and the kernel replay
# tier: leanprover/comparator with its lean4export at the same toolchain, landrun (the
# sandbox comparator builds in), and a Lake workspace for the replays. Build from the
# repository root (needs network: GitHub, the Go module proxy, Mathlib's cache servers):
#   docker build -f deploy/docker/lean-verifier.Dockerfile -t lean-grpo/lean-verifier .
#   docker build -f deploy/docker/lean-verifier.Dockerfile --build-arg MATHLIB_TAG=v4.31.0 --build-arg COMPARATOR_REV=... ...
# This image was written without being built (the development machine has no route
# to GitHub or the cache servers); treat the first build as its test.
ARG NODE_VERSION=20.20.2
# A Mathlib release tag. Its lean-toolchain names the Lean release, and the REPL is
# built at the tag of the same name: .olean files only load in the Lean that wrote them.
# v4.32.0: the newest release with a tag in all three of Mathlib, the REPL and comparator.
ARG MATHLIB_TAG=v4.32.0
# leanprover/comparator at its tag v4.32.0 (its lake-manifest pins lean4export); a build
# checks that its lean-toolchain is Mathlib's. Change it together with MATHLIB_TAG.
ARG COMPARATOR_REV=07bc4ea40f2266dcb861820a2ec1fa3244ed307f
# Zouuup/landrun (Landlock sandbox; comparator wants it built from main): 2026-07-23.
ARG LANDRUN_REV=811cfff51ceaf3d9843708aa6d22e9b84ccac8b4
ARG GO_VERSION=1.24
ARG ELAN_VERSION=v4.1.2
# The turbo of the root package.json's devDependencies (tests/deploy checks they match).
ARG TURBO_VERSION=2.11.9

# --- landrun: the Landlock sandbox comparator runs each build and export in --------
FROM golang:${GO_VERSION}-bookworm AS landrun
ARG LANDRUN_REV
RUN git clone https://github.com/Zouuup/landrun.git /src \
 && cd /src && git checkout "${LANDRUN_REV}" \
 && CGO_ENABLED=0 go build -trimpath -o /out/landrun ./cmd/landrun \
 && /out/landrun --version

# --- Lean, Mathlib, the REPL and comparator -----------------------------------
FROM debian:bookworm-slim AS lean
ARG MATHLIB_TAG
ARG ELAN_VERSION
ARG COMPARATOR_REV
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
# The verifier's token-table query (services/verifier/src/repl/token-table-query.ts) is
# checked against this Lean by the service's first header warm; its answer is logged.

# The kernel replay: comparator and lean4export, built at the same toolchain as Mathlib
# (an .olean only loads in the Lean that wrote it; lean4export reads them).
RUN git clone https://github.com/leanprover/comparator.git /opt/comparator \
 && cd /opt/comparator && git checkout "${COMPARATOR_REV}" \
 && test "$(cat lean-toolchain)" = "$(cat /opt/mathlib4/lean-toolchain)" \
 && lake build lean4export comparator
# The workspace each replay's Lake project is made from (services/verifier/src/replay/
# check-directory.ts copies its top-level files and links .lake/packages): a downstream
# project of Mathlib at the same tag, with Mathlib's prebuilt cache, declaring the two
# modules comparator builds. Owned by root: a solution built in a check cannot write it.
RUN mkdir -p /opt/replay-workspace && cd /opt/replay-workspace \
 && cp /opt/mathlib4/lean-toolchain . \
 && printf '%s\n' 'name = "replay"' 'defaultTargets = []' '' '[[require]]' 'name = "mathlib"' \
      'git = "https://github.com/leanprover-community/mathlib4.git"' "rev = \"${MATHLIB_TAG}\"" '' \
      '[[lean_lib]]' 'name = "Challenge"' '' '[[lean_lib]]' 'name = "Solution"' > lakefile.toml \
 && lake update && lake exe cache get
# Smoke test of the tier: an honest proof passes, a statement changed in the solution does not.
RUN set -e; d=$(mktemp -d); cp /opt/replay-workspace/lakefile.toml /opt/replay-workspace/lake-manifest.json /opt/replay-workspace/lean-toolchain "$d"; \
    mkdir "$d/.lake" && ln -s /opt/replay-workspace/.lake/packages "$d/.lake/packages"; cd "$d"; \
    printf 'theorem smoke : 1 + 1 = 2 := by\n  sorry\n' > Challenge.lean; printf 'theorem smoke : 1 + 1 = 2 := rfl\n' > Solution.lean; \
    printf '{"challenge_module":"Challenge","solution_module":"Solution","theorem_names":["smoke"],"permitted_axioms":["propext","Quot.sound","Classical.choice"]}' > comparator.json; \
    COMPARATOR_LANDRUN=/opt/comparator/scripts/fake-landrun.sh COMPARATOR_LEAN4EXPORT=/opt/comparator/.lake/packages/lean4export/.lake/build/bin/lean4export \
      lake env /opt/comparator/.lake/build/bin/comparator comparator.json | grep -q 'Your solution is okay!'; \
    printf 'theorem smoke : 1 + 1 = 3 := sorry\n' > Solution.lean; rm -rf .lake/build; \
    ! COMPARATOR_LANDRUN=/opt/comparator/scripts/fake-landrun.sh COMPARATOR_LEAN4EXPORT=/opt/comparator/.lake/packages/lean4export/.lake/build/bin/lean4export \
      lake env /opt/comparator/.lake/build/bin/comparator comparator.json; \
    cd / && rm -rf "$d"

# --- the service's JavaScript: the verifier and the workspaces it runs with -------
# As in deploy/docker/service.Dockerfile: deploy/docker/prune.sh cuts the repository
# down to the verifier (turbo prune), esbuild compiles it to services/verifier/dist/, and
# a production install of what it imports goes beside it.
FROM node:${NODE_VERSION}-bookworm-slim AS prune
ARG TURBO_VERSION
ENV TURBO_TELEMETRY_DISABLED=1
RUN npm install --global --no-audit --no-fund "turbo@${TURBO_VERSION}"
WORKDIR /repo
COPY . .
RUN sh deploy/docker/prune.sh verifier /out/verifier

# Compiled as there: a full install of the cut brings esbuild, which bundles the service.
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY --from=prune /out/verifier/json/ ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY --from=prune /out/verifier/full/ ./
RUN node deploy/docker/bundle-service.mjs verifier

FROM node:${NODE_VERSION}-bookworm-slim AS app
WORKDIR /app
COPY --from=prune /out/verifier/json/ ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY --from=build /app/services/verifier/dist/ services/verifier/dist/

# --- runtime ----------------------------------------------------------------------
FROM node:${NODE_VERSION}-bookworm-slim
# bubblewrap: the sandbox of every REPL worker and replay check (repl.sandbox.mode:
# bwrap, the default; the runtime must permit user namespaces, docs/guide/security.md);
# util-linux: prlimit (resource limits, set inside the sandbox) and setpriv
# (deploy/docker/unmask-proc.sh); git: Lake reads package revisions. node is also at
# /nodejs/bin/node, where the distroless images have it, so one health check fits both
# verifier images.
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap util-linux git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 65532 nonroot \
 && useradd --uid 65532 --gid 65532 --create-home --home-dir /home/nonroot nonroot \
 && mkdir -p /nodejs/bin && ln -s /usr/local/bin/node /nodejs/bin/node
# Owned by root: the REPL workers (and code they run) cannot change the toolchain,
# Mathlib's .olean files or the service.
COPY --from=lean /opt/elan /opt/elan
COPY --from=lean /opt/mathlib4 /opt/mathlib4
COPY --from=lean /opt/repl /opt/repl
COPY --from=lean /opt/comparator /opt/comparator
COPY --from=lean /opt/replay-workspace /opt/replay-workspace
COPY --from=landrun /out/landrun /usr/local/bin/landrun
COPY --from=app /app /app
COPY deploy/k8s/base/config/verifier.yaml /etc/lean-grpo/verifier.yaml
COPY deploy/docker/unmask-proc.sh /usr/local/bin/unmask-proc
ENV ELAN_HOME=/opt/elan \
    PATH=/opt/elan/bin:$PATH \
    NODE_ENV=production \
    LOG_LEVEL=info \
    LEAN_REPL_CMD="lake env /opt/repl/.lake/build/bin/repl" \
    LEAN_REPL_CWD=/opt/mathlib4 \
    LEAN_REPLAY_CMD="lake env /opt/comparator/.lake/build/bin/comparator" \
    LEAN_REPLAY_WORKSPACE=/opt/replay-workspace \
    COMPARATOR_LANDRUN=/usr/local/bin/landrun \
    COMPARATOR_LEAN4EXPORT=/opt/comparator/.lake/packages/lean4export/.lake/build/bin/lean4export \
    LEANGRPO_VERIFIER_REPL__DEFAULT_HEADER="import Mathlib" \
    LEANGRPO_VERIFIER_REPL__WARM_HEADERS="[import Mathlib]"
USER 65532:65532
WORKDIR /app
EXPOSE 50052
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s CMD ["node", "services/verifier/dist/health-probe.mjs", "127.0.0.1:50052"]
# As the distroless images of deploy/docker/service.Dockerfile: node is the entry
# point, so deploy/k8s's `args` (the verifier's compiled server.mjs) work with either image.
# deploy/docker/unmask-proc.sh runs it as it is, or, started as root under Compose
# (compose.lean.yaml), lifts Docker's /proc masks and runs it as uid 65532 with no capabilities.
ENTRYPOINT ["/bin/sh", "/usr/local/bin/unmask-proc", "node"]
CMD ["services/verifier/dist/server.mjs", "--config", "/etc/lean-grpo/verifier.yaml"]
