"""haversack-vfs pack."""
