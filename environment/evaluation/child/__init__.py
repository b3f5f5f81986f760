"""Code that runs inside a sandboxed child (candidate, reference or replayer): it trusts nothing it is sent
beyond the protocol's validation and holds no secret, reference output or verdict."""
