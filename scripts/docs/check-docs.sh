#!/usr/bin/env bash
# Fails when the generated reference pages are not what the code says now:
# docs/reference/config.md (the config schemas) and docs/reference/rpc.md (proto/).
set -euo pipefail
cd "$(dirname "$0")/../.."
npx --no-install tsx scripts/docs/config-reference.ts --check
npx --no-install buf generate --template buf.gen.docs.yaml
if ! git diff --quiet -- docs/reference/rpc.md || [ -n "$(git ls-files --others --exclude-standard -- docs/reference/rpc.md)" ]; then
  echo "docs/reference/rpc.md is stale: run 'npm run docs:rpc' and commit the result." >&2
  exit 1
fi
echo "docs/reference/rpc.md is up to date"
