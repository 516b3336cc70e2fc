"""Running the workers: poll leases, poll telemetry, aggregate counts."""
