#!/usr/bin/env bash
# Builds the transferops image with podman, as CI does on machines without a registry:
#   1. installs podman, buildah, runc and debootstrap with apt-get when they are missing;
#   2. builds the stand-in base image (base.sh; skipped when it exists);
#   3. builds ./Dockerfile (--pull=never, --format docker to keep HEALTHCHECK), with the host's
#      network and CA bundle for npm inside the build.
#
#   deploy/image/build.sh [TAG]        # default TAG: transferops:dev (or $IMAGE)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$root/deploy/image/containers.conf}"
tag="${1:-${IMAGE:-localhost/transferops:dev}}"
ca=/etc/ssl/certs/ca-certificates.crt

missing=()
for tool in podman buildah runc debootstrap; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
if ((${#missing[@]})); then
  echo "image: installing ${missing[*]} with apt-get"
  sudo=""; [[ $(id -u) == 0 ]] || sudo=sudo
  # Wait for dpkg's lock rather than fail when another install (unattended upgrades, a browser
  # install of the board's tests) holds it.
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq buildah podman runc debootstrap >/dev/null
fi

bash deploy/image/base.sh

start=$(date +%s)
npmrc="$(mktemp)"
trap 'rm -f "$npmrc"' EXIT
printf 'cafile=%s\nfund=false\naudit=false\nupdate-notifier=false\n' "$ca" >"$npmrc"
podman build --pull=never --format docker --network host \
  -v "$ca:$ca:ro" -v "$npmrc:/root/.npmrc:ro" \
  -t "$tag" -f Dockerfile .
size="$(podman image inspect --format '{{.Size}}' "$tag")"
echo "image: $tag built in $(($(date +%s) - start))s, $((size / 1000000)) MB"
