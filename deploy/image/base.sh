#!/usr/bin/env bash
# Builds a local stand-in for docker.io/library/node:24-bookworm-slim when no registry can be
# reached (CI here): Debian bookworm minbase from the machine's Debian mirror, the pinned Node 24
# binary of node_modules/node, npm in /usr/local, a `node` user (uid 1000). The production
# Dockerfile then builds unchanged with `podman build --pull=never`. No-op when the image exists
# (REBUILD_BASE=1 forces a rebuild).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$root/deploy/image/containers.conf}"
tag=docker.io/library/node:24-bookworm-slim

if podman image exists "$tag" && [[ "${REBUILD_BASE:-}" != 1 ]]; then
  echo "base image: $tag exists (REBUILD_BASE=1 rebuilds it)"
  exit 0
fi
node_bin="$root/node_modules/node/bin/node"
[[ -x "$node_bin" ]] || { echo "base image: $node_bin missing: run npm install first" >&2; exit 1; }

# The Debian mirror the machine itself uses (deb822 or one-line sources).
mirror="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ {print $2; exit}')"
if [[ -z "$mirror" ]]; then
  mirror="$(cat /etc/apt/sources.list 2>/dev/null | awk '$1 == "deb" && $0 !~ /security/ {print $2; exit}')"
fi
mirror="${mirror:-http://deb.debian.org/debian}"

start=$(date +%s)
rootfs="$(mktemp -d /tmp/node-base-XXXXXX)"
trap 'rm -rf "$rootfs"' EXIT
echo "base image: debootstrap bookworm from $mirror"
debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >/tmp/node-base-debootstrap.log 2>&1 ||
  { tail -20 /tmp/node-base-debootstrap.log >&2; exit 1; }
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*

install -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
npm_version="$(npm --version)"
npm install -g --prefix "$rootfs/usr/local" --no-audit --no-fund "npm@$npm_version" >/dev/null
chroot "$rootfs" groupadd --gid 1000 node
chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node

ctr="$(buildah from scratch)"
buildah copy "$ctr" "$rootfs" / >/dev/null
buildah config --env NODE_VERSION="$("$node_bin" --version | tr -d v)" \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --cmd node "$ctr"
buildah commit --quiet "$ctr" "$tag" >/dev/null
buildah rm "$ctr" >/dev/null
echo "base image: $tag built in $(($(date +%s) - start))s (node $("$node_bin" --version), npm $npm_version)"
