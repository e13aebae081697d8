#!/usr/bin/env bash
# Builds every image target: the five of deploy/docker/service.Dockerfile and the PyTorch
# learner of deploy/docker/learner-torch.Dockerfile, tagged lean-grpo/<target>:dev (the
# names deploy/compose.yaml uses). Prints one JSON line per image: its target, size in
# bytes and build seconds.
#
#   bash deploy/compose-check/build-images.sh                 # all six
#   PYTORCH_IMAGE=lean-grpo-local/torch-cpu:bookworm bash ... # the learner-torch base (build argument)
#
# The classic builder (DOCKER_BUILDKIT=0) with the host's network: it needs no front end
# from Docker Hub, and the build steps reach the npm registry directly (an engine started
# without NAT gives its bridge no route out).
set -euo pipefail
cd "$(dirname "$0")/../.."
export DOCKER_BUILDKIT=0

build() { # target dockerfile [build args...]
  local target="$1" file="$2"
  shift 2
  local started=$SECONDS
  local log
  log="$(mktemp)"
  if ! docker build --force-rm --network host -f "$file" "$@" -t "lean-grpo/${target}:dev" . >"$log" 2>&1; then
    echo "build of lean-grpo/${target}:dev failed; the end of its log:" >&2
    tail -n 40 "$log" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
  local size
  size="$(docker image inspect --format '{{.Size}}' "lean-grpo/${target}:dev")"
  echo "{\"image\": \"lean-grpo/${target}:dev\", \"bytes\": ${size}, \"build_s\": $((SECONDS - started))}"
}

for target in inference verifier reward learner orchestrator; do
  build "$target" deploy/docker/service.Dockerfile --target "$target"
done
build learner-torch deploy/docker/learner-torch.Dockerfile ${PYTORCH_IMAGE:+--build-arg "PYTORCH_IMAGE=$PYTORCH_IMAGE"}
