"""Trusted cost accounting: the candidate records a trace (recorder.py), the harness rebuilds its
kernels from the syntax tree (rebuild.py) and a sandboxed replayer (replayer.py, execute.py)
re-executes the trace on held-out inputs and counts it. See modeled_speed.py for the invariant."""
