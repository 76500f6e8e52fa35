"""The figures, one module each: Longform's side of a figure and the function that puts it beside its
peer's (the peers are in `benchmarks.peers`)."""
