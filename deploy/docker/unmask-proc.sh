#!/bin/sh
# The Lean verifier's entry point under Docker Compose. bubblewrap (repl.sandbox.mode: bwrap)
# mounts a fresh /proc for each sandbox, and the kernel refuses that while Docker's masks lie
# over the container's /proc (files bound to /dev/null, read-only folders). `docker run
# --security-opt systempaths=unconfined` lifts them, but that option is translated by the
# docker CLI and Compose cannot pass it. So compose.lean.yaml starts this as root with
# CAP_SYS_ADMIN: it unmounts the masks, then runs the verifier as uid 65532 with no
# capabilities at all (empty bounding set), where the sandboxes' own /proc shows only their
# processes. Started as any other user (Kubernetes: runAsUser 65532 with procMount:
# Unmasked), it runs the command as it is.
set -eu
if [ "$(id -u)" = 0 ]; then
  # Deepest first, so that a mask inside a masked folder goes before the folder.
  awk '$5 ~ "^/proc/" { print $5 }' /proc/self/mountinfo | sort -r | while read -r mask; do
    umount "$mask"
  done
  exec setpriv --reuid 65532 --regid 65532 --clear-groups --inh-caps=-all --bounding-set=-all -- "$@"
fi
exec "$@"
