# Sourced by deploy/compose-check/run.sh: a Docker engine for the check, started here if
# none answers, stopped again by `engine_stop` only if it was started here.
# The engine is started without NAT to the outside (--iptables=false --ip-masq=false):
# containers reach each other on the networks compose makes and the host reaches the ports
# they publish on 127.0.0.1, and nothing else.
ENGINE_PID=""
ENGINE_LOG=""

# Returns 0 with an engine answering, else 1 with the reason in ENGINE_UNAVAILABLE.
engine_start() {
  ENGINE_UNAVAILABLE=""
  if docker info >/dev/null 2>&1; then return 0; fi
  if ! command -v dockerd >/dev/null 2>&1; then
    ENGINE_UNAVAILABLE="no Docker engine answers and dockerd is not installed (Debian: apt-get install docker.io)"
    return 1
  fi
  if [ "$(id -u)" != 0 ]; then
    ENGINE_UNAVAILABLE="no Docker engine answers and starting dockerd needs root"
    return 1
  fi
  ENGINE_LOG="$(mktemp)"
  dockerd --iptables=false --ip-masq=false >"$ENGINE_LOG" 2>&1 &
  ENGINE_PID=$!
  for _ in $(seq 1 60); do
    if docker info >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$ENGINE_PID" 2>/dev/null; then break; fi
    sleep 1
  done
  ENGINE_UNAVAILABLE="dockerd did not start: $(tail -n 3 "$ENGINE_LOG" | tr '\n' ' ')"
  engine_stop
  return 1
}

engine_stop() {
  if [ -n "$ENGINE_PID" ] && kill -0 "$ENGINE_PID" 2>/dev/null; then
    kill "$ENGINE_PID"
    for _ in $(seq 1 30); do kill -0 "$ENGINE_PID" 2>/dev/null || break; sleep 1; done
  fi
  ENGINE_PID=""
  [ -n "$ENGINE_LOG" ] && rm -f "$ENGINE_LOG"
  ENGINE_LOG=""
}
