"""Rules engine."""
