"""The trusted stages of one evaluation, run in the evaluator process forked from the zygote: inputs, the
trials and their comparison, speed (measured or modeled). Candidate code never runs here."""
