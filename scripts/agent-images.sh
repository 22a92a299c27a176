#!/usr/bin/env bash
# Builds the CLI families' agent images locally, from the project's base image:
#   scripts/agent-images.sh [family...]     (default: claude-code codex opencode pi-cli)
# Two images a family: brain/agent-deps:<family>-… (docker/agent-deps.Dockerfile: Brain's runtime dependencies and
# the family's pinned CLI package, copied from this install) and brain/<family>:… on it
# (docker/agent-server.Dockerfile: Brain's compiled build). Each tag carries a hash of what goes in
# (src/agent-server/image-context.ts), so an image is rebuilt exactly when its inputs change and a change to
# Brain's code rebuilds only the small top layer. Needs `npm run build` (the build goes in from dist/) and
# scripts/docker-engine.sh (the engine and the base image). Prints one tag per line.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
base="$("$root/scripts/docker-engine.sh" | tail -n 1)"
context="$root/dist/src/agent-server/image-context.js"
[ -f "$context" ] || { echo "agent-images: no dist/ build: run npm run build first" >&2; exit 1; }
families=("$@")
[ ${#families[@]} -gt 0 ] || families=(claude-code codex opencode pi-cli)
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT

# $1 tag, $2 Dockerfile, $3 context dir, then build arguments. The legacy builder: it uses a local base image as
# it is (BuildKit may ask a registry for its metadata); --pull=false: nothing is pulled.
build() {
  local tag="$1" file="$2" dir="$3"
  shift 3
  local args=()
  for arg in "$@"; do args+=(--build-arg "$arg"); done
  DOCKER_BUILDKIT=0 docker build -q --pull=false -t "$tag" -f "$file" "${args[@]}" "$dir" >/dev/null 2>"$ctx/build.log" ||
    { cat "$ctx/build.log" >&2; echo "agent-images: docker build of $tag failed" >&2; exit 1; }
}

app_hash="$(node "$context" app)"
for family in "${families[@]}"; do
  deps="brain/agent-deps:$family-${base#*:}-$(node "$context" deps "$family")" || exit 1
  if ! docker image inspect "$deps" >/dev/null 2>&1; then
    rm -rf "$ctx/deps" && mkdir "$ctx/deps"
    node "$context" deps "$family" "$ctx/deps" >/dev/null
    build "$deps" "$root/docker/agent-deps.Dockerfile" "$ctx/deps" "BASE=$base"
    rm -rf "$ctx/deps"
  fi
  tag="brain/$family:${base#*:}-$(echo "$deps $app_hash" | sha256sum | cut -c1-12)"
  if ! docker image inspect "$tag" >/dev/null 2>&1; then
    [ -d "$ctx/app" ] || node "$context" app "$ctx/app" >/dev/null
    build "$tag" "$root/docker/agent-server.Dockerfile" "$ctx/app" "DEPS=$deps" "FAMILY=$family"
  fi
  echo "$tag"
done
