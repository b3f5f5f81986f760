"""The same submission gives bit-identical modeled times in separate processes."""
import json
import os
import subprocess
import sys

import pytest

from modeled_helpers import ROOT

SCRIPT = """
import json, sys, torch
sys.path.insert(0, {tests!r})
from modeled_helpers import GELU, GELU_TOLERANCE, count, load_module
from environment.evaluation.modeled.model import load_spec, model_cost
torch.manual_seed(int(sys.argv[1]))
_, report = count(load_module(GELU / "solutions" / "correct" / "triton_fused.py").ModelNew(),
                  torch.randn(127, 257), torch.randn(257))
records = report["launches"]
print(json.dumps(model_cost(records, load_spec(), GELU_TOLERANCE).time_us.hex()))
for r in records:  # with the sm_90 compile's figures (occupancy and spills) too
    r["compiled"] = {{"registers": 255, "spills": 288, "shared_bytes": 0, "num_warps": 4}}
print(json.dumps(model_cost(records, load_spec(), GELU_TOLERANCE).time_us.hex()))
"""


@pytest.mark.slow  # two fresh interpreters importing torch, triton and the package
def test_modeled_time_is_bit_identical_across_processes_and_input_values():
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT))
    script = SCRIPT.format(tests=str(ROOT / "tests" / "environment" / "evaluation" / "modeled"))
    procs = [subprocess.Popen([sys.executable, "-c", script, str(seed)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for seed in (1, 2)]
    outputs = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr[-2000:]
        outputs.append([json.loads(line) for line in stdout.strip().splitlines()[-2:]])
    assert outputs[0] == outputs[1] and outputs[0][0] != outputs[0][1]
