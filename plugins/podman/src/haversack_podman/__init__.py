"""haversack-podman pack."""
