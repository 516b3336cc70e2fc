"""The estimator: pure functions from a config (and weight manifest) to structure, parameters and memory."""
