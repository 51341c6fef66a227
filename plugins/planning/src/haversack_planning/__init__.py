"""haversack-planning pack."""
