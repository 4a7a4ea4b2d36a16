"""Offline training-data tooling (never imported by the referee at run time)."""
