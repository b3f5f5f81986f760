#!/usr/bin/env bash
# The checks that need a CUDA GPU, as one run on a lent H100 (the device tool runs it in a copy of the
# working tree; $OUT comes back). Each step has its own time limit so one slow step cannot lose the rest,
# and the measurements are written line by line, so a step cut by its limit still returns what it measured.
#   1. every shipped correct program and each task's reference timed directly (bench/gpu_rank.py direct):
#      the stale tasks first (those whose contract or programs changed since bench/data/h100_measured.json)
#   2. the fidelity pairs of tests/environment/evaluation/modeled/test_fidelity.py (bench/fidelity_gpu.py)
#   3. the GPU-marked tests: the harness's CUDA path (compiled Triton, CUDA events), load_inline
#   4. every program through the harness's own CUDA path (bench/gpu_rank.py harness): what a CUDA-host Space pays
#   5. with REDTEAM_S set, the red-team suite on the CUDA host (outcomes are pinned for the CPU host: a report)
# Python packages the GPU image lacks travel as cp312 wheels in .whl/: `bash bench/device_wheels.sh` here, once, then
# carry .whl. A lease's 15 minutes hold about two runs (each machine start costs about a minute): the direct timings
# take 190 s, the GPU-marked tests need minutes each at GPU shapes (host-side inputs and judging), and a load_inline
# build over a minute of g++ alone; name the steps a run needs in STEPS.
set -uo pipefail
OUT=${OUT:-/tmp/device_out}
mkdir -p "$OUT"
export PYTHONPATH="$PWD"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    >"$OUT/wheels.log" 2>&1 || echo "wheel install failed (see wheels.log)"
  export PYTHONPATH="/tmp/site:$PWD"
fi
export TRITON_INTERPRET=0 PYTHONUNBUFFERED=1
{ nvidia-smi -L; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())"
  python3 -c "import openenv.core.rubrics, pydantic, pyseccomp; print('openenv rubrics, pydantic, pyseccomp import')"; } \
  2>&1 | tee "$OUT/device.txt"

STEPS=${STEPS:-direct_stale direct_rest fidelity gpu_tests load_inline harness}  # a rerun names the steps it needs
step() {  # name, seconds, command...
  local name=$1 limit=$2; shift 2
  [[ " $STEPS " == *" $name "* ]] || return 0
  local t0=$SECONDS
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  echo "== $name: exit $? in $((SECONDS - t0)) s" | tee -a "$OUT/summary.txt"
  tail -n 15 "$OUT/$name.log"
}
STALE="causal_attention gqa_attention mlp_block matmul_bias_relu cross_entropy layernorm logsumexp rmsnorm gelu_bias"
REST="l2_normalize scale_shift_relu silu_mul softmax"
R=${REPEATS:-5}
step direct_stale "${DIRECT_S:-190}" python3 bench/gpu_rank.py direct --repeats "$R" --tasks $STALE --out "$OUT/direct.jsonl"
step direct_rest "${DIRECT_REST_S:-60}" python3 bench/gpu_rank.py direct --repeats "$R" --tasks $REST --out "$OUT/direct.jsonl"
step fidelity "${FIDELITY_S:-40}" python3 bench/fidelity_gpu.py
step gpu_tests "${GPU_TESTS_S:-120}" python3 -m pytest -q -p no:cacheprovider -rs -n 4 -m gpu \
  tests/environment/evaluation/test_gpu.py tests/environment/evaluation/test_gpu_numerics.py \
  tests/environment/evaluation/test_gpu_verdicts.py tests/environment/evaluation/test_sandbox_cuda_host.py \
  tests/environment/evaluation/test_measured.py tests/environment/tasks/test_kernelbench.py
# the CUDA C++ path outside and inside the sandbox, with the whole build log (the test's assertion clips it)
step load_inline "${LOAD_INLINE_S:-90}" python3 -c '
import dataclasses, sys, tempfile, traceback
from pathlib import Path
from tests.environment.tasks.test_kernelbench import LOAD_INLINE, RELU, _write
from environment.evaluation.harness import evaluate
from environment.config import harness_config
from environment.tasks.kernelbench import load_problem
try:
    exec(compile(LOAD_INLINE.replace("verbose=False", "verbose=True"), "load_inline_probe", "exec"), {})
    print("outside the sandbox: built")
except Exception:
    traceback.print_exc()
task = load_problem(_write(Path(tempfile.mkdtemp()) / "level1", "19_ReLU.py", RELU))
config = dataclasses.replace(harness_config(), timeout_s=300.0, total_timeout_s=600.0)
result = evaluate(task, LOAD_INLINE, config, seed=0)
print("in the sandbox:", result.outcome, result.harness_error, result.load)'
step harness "${HARNESS_S:-110}" python3 bench/gpu_rank.py harness --repeats 1 --out "$OUT/harness.jsonl"
STEPS="$STEPS redteam"; [ -n "${REDTEAM_S:-}" ] && step redteam "$REDTEAM_S" python3 -m pytest -q -p no:cacheprovider -rf -n 12 tests/redteam
cat "$OUT/summary.txt"
