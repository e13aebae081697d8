#!/usr/bin/env bash
# The mesh in containers, for real: builds every image, brings up deploy/compose.yaml
# (plain, then with compose.tls.yaml) with the CPU default, trains the README's run through
# it from this host, checks what the run left in the volumes and what the verifier can
# reach, and tears everything down. Skips (exit 77, saying why) where no Docker engine can run.
#
#   bash deploy/compose-check/run.sh              # everything (about 20 minutes on 2 cores)
#   STEPS=4 bash deploy/compose-check/run.sh      # a shorter training run (default: the README's 100)
#
# Needs docker, docker-compose, and for the bases it may have to make (an engine that
# cannot pull from Docker Hub): mmdebstrap and npm (deploy/local-bases/make-local-bases.sh).
# Starts dockerd (without NAT: --iptables=false --ip-masq=false) if none runs, and stops it
# at the end. Traffic stays on this machine: between containers on the networks compose
# makes, and from here to the ports compose publishes on 127.0.0.1.
# Prints one JSON object per measurement or check on stdout; progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=deploy/compose-check
. "$here/engine.sh"

STEPS="${STEPS:-}"
PROJECT="lgcheck$$"
export LEANGRPO_AUTH_TOKEN="compose-check-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
say() { echo "compose-check: $*" >&2; }
emit() { echo "$1"; }
work="$(mktemp -d)"
made_tls=""
accepted_bridges=()

compose() { docker-compose -p "$PROJECT" "${FILES[@]}" "$@"; }

cleanup() {
  local status=$?
  if [ -n "${FILES+x}" ]; then compose down -v --remove-orphans >/dev/null 2>&1 || true; fi
  for bridge in "${accepted_bridges[@]}"; do iptables -D FORWARD -i "$bridge" -o "$bridge" -j ACCEPT 2>/dev/null || true; done
  [ -n "$made_tls" ] && rm -rf deploy/tls
  rm -rf "$work"
  engine_stop
  exit "$status"
}
trap cleanup EXIT

for tool in docker docker-compose; do
  command -v "$tool" >/dev/null || { say "skipped: $tool is not installed"; exit 77; }
done
if ! engine_start; then say "skipped: $ENGINE_UNAVAILABLE"; exit 77; fi

# --- bases and images ------------------------------------------------------------------
bash deploy/local-bases/make-local-bases.sh
torch_base=()
docker image inspect "$(sed -n 's/^ARG PYTORCH_IMAGE=//p' deploy/docker/learner-torch.Dockerfile)" >/dev/null 2>&1 ||
  torch_base=(PYTORCH_IMAGE=lean-grpo-local/torch-cpu:bookworm)
say "building every image (cold where the engine has no layers yet)"
env "${torch_base[@]}" bash "$here/build-images.sh" | sed 's/"build_s"/"cold_build_s"/' | tee "$work/images.jsonl"
started=$SECONDS
env "${torch_base[@]}" bash "$here/build-images.sh" >/dev/null
emit "{\"warm_build_all_s\": $((SECONDS - started))}"

# --- the Lean verifier's sandbox under compose.lean.yaml's options -------------------------
# bubblewrap in a container of the verifier's runtime base, started by docker-compose with the
# options compose.lean.yaml gives the verifier: the sandbox mounts a /proc of its own pid
# namespace (its process 1 is bubblewrap) and the process that runs it has no capabilities left.
sandbox_ctx="$work/sandbox"
mkdir -p "$sandbox_ctx"
cp "$here/sandbox/Dockerfile" deploy/docker/unmask-proc.sh "$sandbox_ctx/"
DOCKER_BUILDKIT=0 docker build --network host -q -t lean-grpo-local/sandbox-check "$sandbox_ctx" >/dev/null
node --input-type=module -e '
  import { readFileSync, writeFileSync } from "node:fs";
  import { parse, stringify } from "yaml";
  const { user, cap_drop, cap_add, security_opt } = parse(readFileSync("deploy/compose.lean.yaml", "utf8")).services.verifier;
  const sandbox = { image: "lean-grpo-local/sandbox-check", network_mode: "none", user, cap_drop, cap_add, security_opt };
  writeFileSync(process.argv[1], stringify({ version: "2.4", services: { sandbox } }));
' "$work/sandbox.yaml"
inside="$(docker-compose -p "${PROJECT}sb" -f "$work/sandbox.yaml" run --rm -T sandbox sh -c '
  grep CapEff /proc/self/status | tr -s "\t" " "
  bwrap --unshare-all --ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/bin /bin \
    --proc /proc --dev /dev --tmpfs /tmp -- /bin/sh -c "echo init \$(cat /proc/1/comm)"
' 2>&1)" || { echo "$inside" >&2; say "bubblewrap did not run under compose.lean.yaml's options"; exit 1; }
docker-compose -p "${PROJECT}sb" -f "$work/sandbox.yaml" down >/dev/null 2>&1 || true
caps="$(echo "$inside" | sed -n 's/^CapEff: //p')"
# Process 1 of the /proc the sandbox sees is bubblewrap itself: a /proc of its own pid namespace.
init="$(echo "$inside" | sed -n 's/^init //p')"
emit "{\"sandbox\": {\"verifier_capabilities\": \"$caps\", \"sandbox_init\": \"$init\"}}"
[ "$caps" = 0000000000000000 ] && [ "$init" = bwrap ] || { echo "$inside" >&2; say "the sandbox under compose.lean.yaml's options is not confined"; exit 1; }

# --- the stack -------------------------------------------------------------------------
# Images from Docker Hub that this engine cannot pull (the collector, Jaeger) are swapped for
# idle containers: the services' traces then go nowhere, which they tolerate.
override="$work/offline.yaml"
echo "services:" >"$override"
for svc in otel-collector jaeger; do
  image="$(sed -n "/^  ${svc}:/,/^  [a-z]/ s/^    image: //p" deploy/compose.yaml)"
  if ! docker image inspect "$image" >/dev/null 2>&1; then
    printf '  %s:\n    image: gcr.io/distroless/nodejs20-debian12:nonroot\n    command: ["-e", "setInterval(() => {}, 3600000)"]\n' "$svc" >>"$override"
    say "$svc: $image is not on this engine; an idle container stands in"
  fi
done

# Accepts forwarding within each of the project's bridges when the host's FORWARD chain
# would drop bridged packets (a policy left by an earlier engine); never out of them.
accept_bridged() {
  iptables -S FORWARD 2>/dev/null | grep -q '^-P FORWARD DROP' || return 0
  for net in $(docker network ls -q --filter "label=com.docker.compose.project=$PROJECT"); do
    bridge="br-${net:0:12}"
    iptables -I FORWARD -i "$bridge" -o "$bridge" -j ACCEPT
    accepted_bridges+=("$bridge")
  done
}

# Waits until the five services report healthy; prints the seconds it took.
wait_healthy() {
  local started=$SECONDS
  while :; do
    local healthy=0
    for svc in inference verifier reward learner orchestrator; do
      id="$(compose ps -q "$svc")"
      [ "$(docker inspect -f '{{.State.Health.Status}}' "$id" 2>/dev/null)" = healthy ] && healthy=$((healthy + 1))
    done
    [ "$healthy" = 5 ] && break
    if [ $((SECONDS - started)) -gt 300 ]; then
      compose ps >&2
      compose logs --tail 20 >&2
      say "the services were not healthy within 300 s"
      return 1
    fi
    sleep 2
  done
  echo $((SECONDS - started))
}

bring_up() { # label
  compose up --no-start >&2
  accept_bridged
  local started=$SECONDS
  compose up -d >&2
  wait_healthy >/dev/null
  emit "{\"stack\": \"$1\", \"up_to_healthy_s\": $((SECONDS - started))}"
}

# The run as the README trains it, from this host through the published orchestrator port:
# `lean-grpo train --url`, or where this checkout's CLI has no --url, the Python grpcio client
# (examples/clients/train_run.py) with the run settings of configs/train/arith.yaml.
train_readme_run() { # url run_id [steps]
  local url="$1" run_id="$2" steps="${3:-$STEPS}"
  if npx --no-install lean-grpo train --help 2>/dev/null | grep -q -- "--url"; then
    # The run's id is exp_name-<time>-<random>; found again in the runs volume by its prefix.
    local args=(train --url "$url" examples/arith.jsonl --config configs/train/arith.yaml "exp_name=$run_id")
    [ -n "$steps" ] && args+=(--steps "$steps")
    npx --no-install lean-grpo "${args[@]}" >&2
    TRAINED_RUN_ID="$(in_runs_volume sh -c "ls /runs | grep '^$run_id-' | tail -n 1")"
    return
  fi
  [ -f "$work/leangrpo.binpb" ] || node_modules/.bin/buf build --as-file-descriptor-set -o "$work/leangrpo.binpb"
  local run_config
  run_config="$(STEPS="$steps" node --input-type=module -e '
    import { readFileSync } from "node:fs";
    import { parse } from "yaml";
    const { model, services, runs_dir, ...run } = parse(readFileSync("configs/train/arith.yaml", "utf8"));
    if (process.env.STEPS) run.training.steps = Number(process.env.STEPS);
    console.log(JSON.stringify({ ...run, exp_name: process.argv[1] }));
  ' "$run_id")"
  /usr/bin/python3 examples/clients/train_run.py "${url#http://}" "$work/leangrpo.binpb" examples/arith.jsonl "$run_config" >"$work/train.jsonl"
  local last
  last="$(tail -n 1 "$work/train.jsonl")"
  echo "$last" >&2
  TRAINED_RUN_ID="$(echo "$last" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).run.id))')"
}

# Reads a run's files from the runs volume with a throwaway container (the services' images
# have no shell).
in_runs_volume() { # command...
  docker run --rm --network none -v "${PROJECT}_runs:/runs:ro" node:20.20.2-bookworm-slim "$@"
}

FILES=(-f deploy/compose.yaml -f "$override")
say "compose up (plain text inside the mesh, auth on)"
bring_up plain

run_id="compose-check-readme"
TRAINED_RUN_ID=""
started=$SECONDS
train_readme_run http://127.0.0.1:50055 "$run_id"
[ -n "$TRAINED_RUN_ID" ] && run_id="$TRAINED_RUN_ID"
emit "{\"run\": \"$run_id\", \"train_s\": $((SECONDS - started))}"

# The held-out curve, from the run's own eval.jsonl in the volume.
curve="$(in_runs_volume node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
  console.log(JSON.stringify(lines.map((l) => [l.step, l.heldout_accuracy])));
' "/runs/$run_id/eval.jsonl")"
emit "{\"heldout_curve\": $curve}"

# Checkpoints, adapters and the run folder are in the volumes, written by the non-root user.
for volume in runs checkpoints adapters; do
  counts="$(docker run --rm --network none -v "${PROJECT}_${volume}:/v:ro" node:20.20.2-bookworm-slim \
    sh -c 'echo "$(find /v -type f | wc -l) $(find /v -not -uid 65532 | wc -l)"')"
  set -- $counts
  emit "{\"volume\": \"$volume\", \"files\": $1, \"not_owned_by_65532\": $2}"
  if [ "$2" != 0 ]; then say "volume $volume holds files not written by uid 65532"; exit 1; fi
done
# The run folder (the learner's checkpoints and the adapters are in their own volumes, above).
in_runs_volume sh -c "cd /runs/$run_id && test -f run.json && test -s metrics.jsonl && test -s eval.jsonl" ||
  { say "the run folder is missing from the runs volume or holds no metrics"; exit 1; }

# The verifier is attached to the project's no-egress network only, and the engine holds that
# network internal. Docker keeps an internal network's traffic in with its iptables rules; an
# engine started without them (--iptables=false, as this check starts one) does not, so this
# reads the attachment the compose file asks for rather than sending packets.
verifier_networks="$(docker inspect -f '{{range $name, $_ := .NetworkSettings.Networks}}{{$name}} {{end}}' "$(compose ps -q verifier)")"
internal="$(docker network inspect -f '{{.Internal}}' "${PROJECT}_no-egress")"
emit "{\"verifier_networks\": \"${verifier_networks% }\", \"no_egress_internal\": $internal}"
[ "${verifier_networks% }" = "${PROJECT}_no-egress" ] && [ "$internal" = true ] ||
  { say "the verifier is not on the internal no-egress network alone"; exit 1; }

compose down -v --remove-orphans >&2
left="$(docker ps -aq --filter "label=com.docker.compose.project=$PROJECT" | wc -l) $(docker volume ls -q --filter "label=com.docker.compose.project=$PROJECT" | wc -l) $(docker network ls -q --filter "label=com.docker.compose.project=$PROJECT" | wc -l)"
set -- $left
emit "{\"left_after_down\": {\"containers\": $1, \"volumes\": $2, \"networks\": $3}}"
[ "$1 $2 $3" = "0 0 0" ] || { say "compose down -v left something behind"; exit 1; }

# --- TLS inside the mesh -----------------------------------------------------------------
# The certificate compose.tls.yaml's comment makes, also naming 127.0.0.1 so that this host's
# client can dial the published port by address; the services (uid 65532) read its 0600 files.
if [ ! -d deploy/tls ]; then
  made_tls=1
  sh deploy/k8s/make-tls-secret.sh --dir deploy/tls --files-only --name learner-torch --name 127.0.0.1 >&2
  chown -R 65532:65532 deploy/tls
fi
FILES=(-f deploy/compose.yaml -f deploy/compose.tls.yaml -f "$override")
say "compose up with compose.tls.yaml"
bring_up tls
buf=node_modules/.bin/buf
health='{"service": ""}'
if "$buf" curl --protocol grpc --http2-prior-knowledge -d "$health" \
  http://127.0.0.1:50055/grpc.health.v1.Health/Check >/dev/null 2>&1; then
  say "a plain-text call to the TLS mesh was answered"
  exit 1
fi
"$buf" curl --protocol grpc --cacert deploy/tls/ca.crt --servername orchestrator -d "$health" \
  https://127.0.0.1:50055/grpc.health.v1.Health/Check >&2
emit '{"tls": {"plaintext_refused": true, "tls_health": "SERVING"}}'
NODE_EXTRA_CA_CERTS="$PWD/deploy/tls/ca.crt" train_readme_run https://127.0.0.1:50055 compose-check-tls 2
emit '{"tls": {"run": "compose-check-tls", "steps": 2, "state": "COMPLETED"}}'
compose down -v --remove-orphans >&2
emit '{"done": true}'
