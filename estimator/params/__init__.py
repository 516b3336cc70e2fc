"""Parameter counting shared by every architecture: the build accumulator and its layers (`blocks`), task heads,
the `ModelSpec` the memory model reads (`spec`) and the layer graph (`structure`)."""
