#!/usr/bin/env bash
# The checks that need a CUDA GPU, as one run on a lent H100 (the device tool runs it in a copy of the
# working tree; $OUT comes back). Each step has its own time limit so one slow step cannot lose the rest.
#   1. the fidelity pairs of tests/environment/evaluation/modeled/test_fidelity.py timed on the GPU (bench/fidelity_gpu.py)
#   2. the GPU-marked tests: the harness's CUDA path (compiled Triton, CUDA events), load_inline
#   3. the red-team suite on the CUDA host (outcomes are pinned for the CPU host: a report, not a gate)
# Python packages the GPU image lacks travel as wheels in .whl/ (see the device tool's README):
#   pydantic, pydantic_core (cp312), annotated-types, typing-inspection, typing_extensions, pyseccomp.
set -uo pipefail
OUT=${OUT:-/tmp/device_out}
mkdir -p "$OUT"
export PYTHONPATH="$PWD"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH="/tmp/site:$PWD"
fi
export TRITON_INTERPRET=0 PYTHONUNBUFFERED=1
{ nvidia-smi -L; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())"; } 2>&1 | tee "$OUT/device.txt"

step() {  # name, seconds, command...
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  echo "== $name: exit $? in $((SECONDS - t0)) s" | tee -a "$OUT/summary.txt"
  tail -n 25 "$OUT/$name.log"
}
step fidelity "${FIDELITY_S:-150}" python3 bench/fidelity_gpu.py
step gpu_tests "${GPU_TESTS_S:-240}" python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/environment/evaluation/test_gpu.py tests/environment/tasks/test_kernelbench.py
step redteam "${REDTEAM_S:-150}" python3 -m pytest -q -p no:cacheprovider -rf -n 12 tests/redteam
