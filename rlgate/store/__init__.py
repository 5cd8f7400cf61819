"""Persistent project state (checkpoint history, counters) in one SQLite file per project."""
