"""Modeled time on a named target GPU, for CPU hosts where Triton runs under the interpreter.

counting.py (candidate child) counts bytes, FLOPs and launches; model.py (trusted) turns the
counts into time with the spec in gpus.yaml; gates.py says when modeled credit is allowed;
aot.py compiles the kernels for sm_90 in a short-lived worker; selftest.py pins known counts.
"""
