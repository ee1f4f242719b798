"""Benchmarks: scripts that print figures next to a baseline measured in the same run."""
