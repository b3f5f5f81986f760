"""Registers, spills and shared memory of mlp_block's tf32x3 linear kernel per tile shape (the sm_90 compile the
occupancy model reads), e.g.

    PYTHONPATH=. python bench/tile_spills.py 128,128,32,8,3 64,256,64,8,2

Each argument is BLOCK_M,BLOCK_N,BLOCK_K,num_warps,num_stages for
environment/tasks/problems/mlp_block/solutions/correct/triton_fused_tf32x3.py's linear_kernel (fp32, GELU epilogue)."""
import sys
from pathlib import Path

from environment.evaluation.modeled import aot
from environment.evaluation.replay.rebuild import rebuild

SOLUTION = Path(__file__).resolve().parents[1] / "environment/tasks/problems/mlp_block/solutions/correct/triton_fused_tf32x3.py"
# as the trace records fc1's launch at the GPU shape (triton_launch.launch_signature): 16-byte aligned pointers and
# sizes divisible by 16, unit strides specialised to the constant 1
POINTERS, SIZES, UNIT = ("x_ptr", "w_ptr", "b_ptr", "out_ptr"), ("M", "N", "K", "stride_xm", "stride_wn", "stride_om"), \
    ("stride_xk", "stride_wk", "stride_on")
SIGNATURE = {**{p: "*fp32" for p in POINTERS}, **{p: "i32" for p in SIZES}, **{p: "constexpr" for p in UNIT}}


def main(configs: list[str]) -> None:
    kernels = []
    for cfg in configs:
        bm, bn, bk, warps, stages = map(int, cfg.split(","))
        kernels.append({"name": "linear_kernel", "signature": SIGNATURE, "aligned": [*POINTERS, *SIZES],
                        "constexprs": {**{p: 1 for p in UNIT}, "APPLY_GELU": True, "EVEN_K": True, "BLOCK_M": bm,
                                       "BLOCK_N": bn, "BLOCK_K": bk},
                        "options": {"num_warps": warps, "num_stages": stages}})
    for cfg, info in zip(configs, aot.compile_kernels(rebuild(SOLUTION.read_text()), kernels)):
        print(f"{cfg}: registers={info.registers} spilled={info.spills} B shared={info.shared_bytes} B "
              f"ok={info.ok} {info.error or ''}")


if __name__ == "__main__":
    main(sys.argv[1:])
