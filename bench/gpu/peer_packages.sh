#!/usr/bin/env bash
# The packages TRL's arm of bench/gpu/versus_trl.py needs beyond torch, transformers and peft
# (trl, datasets, dill, multiprocess: all pure Python), fetched on a machine with a package index
# and unpacked into one directory, for a GPU host without network:
#
#   bash bench/gpu/peer_packages.sh tmp/gpu-site          # here
#   PYTHONPATH=$PWD/tmp/gpu-site python3 bench/gpu/versus_trl.py --out versus-trl.json   # there
#
# Unpacked rather than installed, so the host's Python version does not have to match the wheels'
# tags (multiprocess publishes one wheel per Python version; its code runs on the next one too).
set -euo pipefail
target="${1:?usage: peer_packages.sh DIR}"
python3="${PYTHON:-python3}"
wheels="$(mktemp -d)"
"$python3" -m pip download --quiet --no-deps --only-binary=:all: -d "$wheels" "trl==1.13.0" datasets dill multiprocess
mkdir -p "$target"
for wheel in "$wheels"/*.whl; do
  "$python3" -m zipfile -e "$wheel" "$target"
done
rm -rf "$wheels"
echo "unpacked into $target: $(ls "$target" | grep -E '^(trl|datasets|dill|multiprocess)$' | tr '\n' ' ')"
