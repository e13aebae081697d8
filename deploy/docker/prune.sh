#!/bin/sh
# Cuts the monorepo down to one service and the workspaces it runs with, for that
# service's image: `turbo prune --docker` writes OUT/json (the root and workspace
# package.json files plus a lockfile holding only their dependencies: install these
# first, so the layer is cached across source changes) and OUT/full (their sources).
#
#   sh deploy/docker/prune.sh SERVICE OUT      e.g.  sh deploy/docker/prune.sh learner /out/learner
#
# Run it from the root of a DISPOSABLE copy of the repository (a Docker build stage,
# a test's temporary folder): it edits package.json files there. It needs `turbo` on
# PATH (the version pinned in the root package.json) and reads package.json,
# package-lock.json, turbo.json, .npmrc, tsconfig.base.json, the workspaces and
# deploy/docker/bundle-service.mjs.
# The same script runs in deploy/docker/*.Dockerfile and in tests/deploy/images.spec.ts.
set -eu

service="${1:?usage: prune.sh SERVICE OUT}"
out="${2:?usage: prune.sh SERVICE OUT}"

# An image is a production install, so the dependency graph it is cut from is the
# run-time one. turbo prune keeps the root's dependencies (the root depends on the
# CLI, which depends on every service) and every workspace's devDependencies (reward
# names the seeded generator for its tests only); drop both here, or each image would
# hold workspaces its service never loads.
npm pkg delete dependencies
npm pkg delete devDependencies --workspaces

turbo prune "@lean-grpo/${service}" --docker --out-dir "${out}"

# Tests and test configuration stay out of images.
find "${out}/full" \( -type d -name test -o -type f \( -name '*.spec.ts' -o -name '*.test.ts' -o -name 'vitest.config.ts' \) \) -prune -exec rm -rf {} +
# The workspaces' tsconfig.json files extend it.
cp tsconfig.base.json "${out}/full/"
# What compiles the service for its image (deploy/docker/*.Dockerfile's build stage).
mkdir -p "${out}/full/deploy/docker"
cp deploy/docker/bundle-service.mjs "${out}/full/deploy/docker/"
