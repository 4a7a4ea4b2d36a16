"""Package placeholder."""
