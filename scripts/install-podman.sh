#!/usr/bin/env bash
# install-podman.sh - the repository's entry to the Podman set-up the haversack-podman pack ships.
# The script itself lives in the pack (plugins/podman/src/haversack_podman/install-podman.sh) so a
# pip user runs the same thing as: sudo python -m haversack_podman setup
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/../plugins/podman/src/haversack_podman/install-podman.sh" "$@"
