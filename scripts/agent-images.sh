#!/usr/bin/env bash
# Builds the CLI families' agent images (docker/agent-server.Dockerfile) from the project's base image, locally:
#   scripts/agent-images.sh [family...]     (default: claude-code codex opencode pi-cli)
# Each is tagged brain/<family>:node-<version>-<hash of the Dockerfile, package-lock.json and this checkout's
# path>, so a changed pin or definition builds a new image and an unchanged one is not rebuilt. Needs
# `npm run build` (the server runs from dist/) and scripts/docker-engine.sh (the engine and the base image).
# Prints one tag per line.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
base="$("$root/scripts/docker-engine.sh" | tail -n 1)"
[ -f "$root/dist/src/agent-server/agent-server-main.js" ] ||
  { echo "agent-images: no dist/ build: run npm run build first" >&2; exit 1; }
# The install's path is in the image's command, so two checkouts get two images.
hash="$({ cat "$root/docker/agent-server.Dockerfile" "$root/package-lock.json"; echo "$root"; } | sha256sum | cut -c1-12)"
node_version="$(node -p process.versions.node)"
families=("$@")
[ ${#families[@]} -gt 0 ] || families=(claude-code codex opencode pi-cli)
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
sed "s|@BRAIN_ROOT@|$root|g" "$root/docker/agent-server.Dockerfile" >"$ctx/Dockerfile"
for family in "${families[@]}"; do
  case "$family" in claude-code | codex | opencode | pi-cli) ;; *)
    echo "agent-images: unknown family \"$family\"; build one of claude-code, codex, opencode, pi-cli" >&2
    exit 1
    ;;
  esac
  tag="brain/$family:node-$node_version-$hash"
  if ! docker image inspect "$tag" >/dev/null 2>&1; then
    # An empty context: nothing is copied in; the base image is local, so nothing is pulled.
    # The legacy builder: it uses a local base image as it is (BuildKit may ask a registry for its metadata).
    DOCKER_BUILDKIT=0 docker build -q --pull=false -t "$tag" --build-arg "BASE=$base" \
      --build-arg "FAMILY=$family" --build-arg "BRAIN_ROOT=$root" "$ctx" >/dev/null 2>"$ctx/build.log" ||
      { cat "$ctx/build.log" >&2; echo "agent-images: docker build of $tag failed" >&2; exit 1; }
  fi
  echo "$tag"
done
