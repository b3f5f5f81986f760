"""The environment's own failures, told apart from the submission's everywhere in the harness."""


class HarnessFault(Exception):
    """The environment failed, not the submission: the reference raised or ran out of memory, the
    evaluator's own inputs broke a limit, a trusted process broke. The evaluation ends with
    outcome "harness_error": no score, no turn consumed, the cause reported and logged."""
