#!/usr/bin/env bash
# A Docker engine for the real-container tests and CI, with nothing from a registry:
#   1. installs Debian's docker.io (and busybox-static, the images' userland) when dockerd is missing;
#   2. starts dockerd when `docker info` does not answer, with NAT and forwarding off (containers reach nothing
#      outside this machine; the tests run them with --network none anyway) and a dead proxy, so a stray pull
#      fails at once instead of trying the network;
#   3. builds the project's base image locally: this host's own node binary (and python3, for the seed's Python
#      agent), the shared libraries they load and busybox, imported as a root filesystem; tagged by node version.
# Prints the image tag on its last line. Exits non-zero with what to do when any step is impossible here.
set -euo pipefail

log() { echo "docker-engine: $*" >&2; }
die() {
  log "$*"
  exit 1
}

# Test files run in parallel and each calls this script: one at a time, so dockerd starts once and the image
# is built once.
if command -v flock >/dev/null 2>&1; then
  exec 9>"${TMPDIR:-/tmp}/brain-docker-engine.lock"
  flock -w 300 9 || die "another docker-engine.sh held ${TMPDIR:-/tmp}/brain-docker-engine.lock for 5 minutes"
fi

if ! command -v dockerd >/dev/null 2>&1 || ! command -v busybox >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 ||
    die "no Docker engine and no apt-get: install Docker (https://docs.docker.com/engine/install/) and busybox, then rerun"
  [ "$(id -u)" = 0 ] || die "no Docker engine: run as root, or: sudo apt-get install -y --no-install-recommends docker.io busybox-static"
  log "installing docker.io busybox-static"
  (apt-get install -y --no-install-recommends docker.io busybox-static >/dev/null 2>&1) ||
    (apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends docker.io busybox-static >/dev/null) ||
    die "apt-get install -y --no-install-recommends docker.io busybox-static failed"
fi

if ! docker info >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || die "dockerd is not running and this user cannot start it: start Docker (sudo dockerd &) and rerun"
  log "starting dockerd"
  mkdir -p /var/log
  # setsid: the daemon outlives this script and the test run that called it. 9>&-: it must not inherit the
  # lock, or every later call of this script waits on a lock the daemon holds forever.
  HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY= \
    setsid dockerd --iptables=false --ip-forward=false --ip-masq=false >/var/log/brain-dockerd.log 2>&1 </dev/null 9>&- &
  for _ in $(seq 1 150); do
    docker info >/dev/null 2>&1 && break
    sleep 0.2
  done
  docker info >/dev/null 2>&1 || die "dockerd did not answer within 30 s; see /var/log/brain-dockerd.log"
fi

NODE=$(command -v node)
PYTHON=/usr/bin/python3
# Bump RECIPE when the image's contents change, so a machine that has the old image builds the new one.
RECIPE=4
TAG="brain/base:node-$("$NODE" --version | tr -d v)-r$RECIPE"
if docker image inspect "$TAG" >/dev/null 2>&1; then
  echo "$TAG"
  exit 0
fi

log "building $TAG"
ROOTFS=$(mktemp -d)
trap 'rm -rf "$ROOTFS"' EXIT
mkdir -p "$ROOTFS"/{bin,usr/bin,usr/local/bin,etc,tmp,root,home/node,work,proc,sys,dev}
chmod 1777 "$ROOTFS/tmp"
cp -L "$NODE" "$ROOTFS/usr/local/bin/node"
cp -L "$(command -v busybox)" "$ROOTFS/bin/busybox"
# Each applet where scripts look for it (/usr/bin/env for a `#!/usr/bin/env node` CLI, /bin/sh, …).
for applet in $("$ROOTFS/bin/busybox" --list-full); do
  mkdir -p "$ROOTFS/$(dirname "$applet")"
  [ -e "$ROOTFS/$applet" ] || ln -s /bin/busybox "$ROOTFS/$applet"
done
# bash too: Claude Code runs its shell tool only in bash or zsh, not busybox's sh.
cp -L /bin/bash "$ROOTFS/usr/bin/bash"
ln -s /usr/bin/bash "$ROOTFS/bin/bash"
binaries=("$NODE" /bin/bash)
if [ -x "$PYTHON" ]; then
  real=$(readlink -f "$PYTHON")
  cp -L "$real" "$ROOTFS/usr/bin/python3"
  version=$(basename "$real")
  # The standard library without its own tests, caches and GUI parts: enough for an agent on http.server.
  mkdir -p "$ROOTFS/usr/lib"
  tar -C /usr/lib --exclude="$version/test" --exclude='__pycache__' --exclude="$version/idlelib" \
    --exclude="$version/tkinter" -cf - "$version" | tar -C "$ROOTFS/usr/lib" -xf -
  binaries+=("$real")
  for module in /usr/lib/"$version"/lib-dynload/*.so; do binaries+=("$module"); done
fi
# All of glibc (4 MB), not only what node loads: the CLIs the project pins ship native binaries of their own
# (claude needs librt), and they run in this image from the mounted install.
if command -v dpkg >/dev/null 2>&1; then
  dpkg -L libc6 | grep -E '\.so(\.[0-9]+)*$' | grep -v gconv | while read -r lib; do
    [ -e "$lib" ] && cp -L --parents "$lib" "$ROOTFS" 2>/dev/null || true
  done
fi
for binary in "${binaries[@]}"; do
  { ldd "$binary" 2>/dev/null || true; } | { grep -o '/[^ ]*' || true; } | sort -u | while read -r lib; do
    [ -e "$lib" ] && cp -L --parents "$lib" "$ROOTFS" 2>/dev/null || true
  done
done
cat >"$ROOTFS/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
node:x:1000:1000:node:/home/node:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat >"$ROOTFS/etc/group" <<'EOF'
root:x:0:
node:x:1000:
nogroup:x:65534:
EOF
chown 1000:1000 "$ROOTFS/home/node"
echo "127.0.0.1 localhost" >"$ROOTFS/etc/hosts"
tar -C "$ROOTFS" -cf - . | docker import \
  -c 'ENV PATH=/usr/local/bin:/usr/bin:/bin' -c 'ENV HOME=/root' -c 'ENV SHELL=/usr/bin/bash' -c 'WORKDIR /work' \
  -c 'LABEL brain.image=base' -c 'CMD ["node"]' - "$TAG" >/dev/null ||
  die "docker import of $TAG failed"
echo "$TAG"
