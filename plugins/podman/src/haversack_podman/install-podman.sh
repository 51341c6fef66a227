#!/usr/bin/env bash
# install-podman.sh - install what the haversack-podman sandbox needs on Debian 12 (rootful Podman).
#
# Idempotent: when every package is already installed it only checks and exits (no apt-get update).
# Packages (see docs/packs/podman.md):
#   podman conmon netavark   - the engine, its monitor and the network backend (avoids CNI warnings)
#   runc                     - OCI runtime; Debian's default crun refuses cgroup v1 "hybrid" hosts
#   catatonit                - the --init binary (PID 1 that reaps and forwards signals)
#   busybox-static           - the userland of the offline sandbox images
#   python3-minimal libpython3.11-stdlib
#                            - the interpreter and stdlib copied into localhost/haversack-sandbox-python
# --no-install-recommends keeps buildah, dbus-user-session, fuse-overlayfs... out.
# Nothing under /etc is edited: haversack_podman writes its own containers.conf at run time.
set -euo pipefail

PKGS="podman runc conmon catatonit busybox-static netavark python3-minimal libpython3.11-stdlib"

log() { printf '[install-podman] %s\n' "$*" >&2; }
[ "$(id -u)" = 0 ] || { log "ERROR: run as root (the sandbox uses rootful Podman)"; exit 1; }

missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done

if [ -z "$missing" ]; then
  log "all packages present: $PKGS"
else
  log "installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086  # word splitting of the package list is intended
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

command -v podman >/dev/null || { log "ERROR: podman missing after install"; exit 1; }
command -v runc >/dev/null || { log "ERROR: runc missing after install"; exit 1; }
log "podman $(podman --version | awk '{print $3}') ready; next: python -m haversack_podman build-images (setup runs it for you)"
