#!/usr/bin/env bash
# Python held to a formatter and a linter, as the TypeScript is held to biome: black
# (line length 160, the packages' style) and flake8 (.flake8) over the PyTorch learner, the
# independent reference and the GPU check. Both come from Debian (`apt-get install black
# flake8`): the registries this project reaches are npm's and Debian's, and Debian has no ruff.
# `black -l 160 DIRS` fixes the formatting.
set -euo pipefail
cd "$(dirname "$0")/.."
dirs=(services/learner-torch scripts/reference bench/gpu apps/lean-grpo/test/tracking)
black --check --quiet -l 160 "${dirs[@]}"
flake8 "${dirs[@]}"
echo "python style: black and flake8 clean (${dirs[*]})"
