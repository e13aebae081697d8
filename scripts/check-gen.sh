#!/usr/bin/env bash
# Fails when gen/ does not match what `npm run gen` makes from proto/ now.
set -euo pipefail
cd "$(dirname "$0")/.."
npx --no-install buf generate
if ! git diff --quiet -- gen/ts/src || [ -n "$(git ls-files --others --exclude-standard -- gen/ts/src)" ]; then
  echo "gen/ is stale: run 'npm run gen' and commit the result. Differences:" >&2
  git status --short -- gen/ts/src >&2
  exit 1
fi
echo "gen/ is up to date"
