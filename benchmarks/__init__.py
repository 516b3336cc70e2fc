"""Benchmarks: speed and accuracy targets, run as `python -m benchmarks.<name>`."""
