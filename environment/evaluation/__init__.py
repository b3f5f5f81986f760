"""The harness: evaluate(task, source, config) -> EvalResult (see harness.py)."""
