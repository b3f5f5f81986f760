"""PyTorch work is counted as GPU launches: one per non-view aten op, FLOPs from flop_counter."""
import torch

from modeled_helpers import count


def test_views_and_allocations_are_not_launches():
    x = torch.randn(64, 32)
    _, report = count(lambda v: torch.empty_like(v).copy_(v.t().contiguous().t()).view(-1)[:10].sum(), x)
    assert [r["name"] for r in report["launches"]] == ["aten.clone.default", "aten.copy_.default",
                                                        "aten.sum.default"]


def test_cpu_flash_attention_is_charged_the_gpu_flash_attention_formula():
    q, k, v = (torch.randn(1, 2, 65, 32) for _ in range(3))
    _, report = count(lambda a, b, c: torch.nn.functional.scaled_dot_product_attention(a, b, c, is_causal=True),
                      q, k, v)
    [launch] = report["launches"]
    assert launch["name"] == "aten._scaled_dot_product_flash_attention_for_cpu.default"
    assert launch["flops"] == {"dot_fp32": 4.0 * 2 * 65 * 65 * 32}  # 2 matmuls of 2*S*S*D per head


def test_a_half_precision_sdpa_is_priced_as_flash_attention_2_runs_it():
    """bf16 SDPA is the flash backend on a GPU: one CTA per 128-row query block and head (occupancy, as a
    Triton launch), only the key blocks at or below the diagonal when causal (kBlockN 128 at D 64), and the
    online softmax's elementwise ops on every score computed (5, and the rescale of D output columns per
    key block). fp32 SDPA stays one launch on the full S x S formula."""
    q, k, v = (torch.randn(1, 2, 200, 64, dtype=torch.bfloat16) for _ in range(3))
    scores = 128 * 128 + 72 * 200                 # query block 0: its diagonal key block; block 1: all 200 keys
    ops = 5 + 64 / 128
    for causal, per_head, busiest in ((True, scores, 128 * 128), (False, 200 * 200, 128 * 200)):
        _, report = count(lambda a, b, c: torch.nn.functional.scaled_dot_product_attention(a, b, c, is_causal=causal),
                          q, k, v)
        [launch] = report["launches"]
        assert launch["programs"] == 2 * 2
        assert launch["flops"] == {"dot_bf16": 2 * per_head * 2 * (64 + 64), "fp32": 2 * per_head * ops}
        assert launch["program_flops_max"] == {"dot_bf16": busiest * 2 * (64 + 64), "fp32": busiest * ops}
    _, report = count(lambda a, b, c: torch.nn.functional.scaled_dot_product_attention(a, b, c, is_causal=True),
                      *(t.float() for t in (q, k, v)))
    assert report["launches"][0]["programs"] is None
    assert report["launches"][0]["flops"] == {"dot_fp32": 4.0 * 2 * 200 * 200 * 64}


def test_an_op_that_overwrites_its_destination_whole_reads_nothing_there():
    # torch.empty(n).zero_() before atomic sums, an autotune pre_hook zeroing a workspace: a memset writes only.
    # Counted as reading the fresh buffer, it read garbage (a tainted launch: no speed credit) and paid twice
    x = torch.randn(64, 256)

    def zeroed_then_summed(v):
        acc = torch.empty(64, 256)
        acc.zero_()
        acc.add_(v)                     # reads acc (and v): an in-place op that reads its destination
        out = torch.empty(64, 256)
        torch.mul(acc, 2.0, out=out)    # out= is written, not read
        return out.copy_(out * 0.5)     # copy_ reads the source only

    _, report = count(zeroed_then_summed, x)
    assert report["tainted_launches"] == []
    size = 64 * 256 * 4
    assert [(r["name"], r["bytes_unique"]) for r in report["launches"]] == [
        ("aten.zero_.default", size), ("aten.add_.Tensor", 3 * size), ("aten.mul.out", 2 * size),
        ("aten.mul.Tensor", 2 * size), ("aten.copy_.default", 2 * size)]
    _, report = count(lambda v: torch.empty(64, 256).add_(v), x)   # a fresh buffer read in place: garbage
    assert report["tainted_launches"] == ["aten.add_.Tensor"]

    def ends_zeroed(v):   # a strided view's writes count as its whole span: its destination stays read (garbage)
        g = torch.empty(64, 256)
        g.view(-1).as_strided((2,), (g.numel() - 1,)).zero_()
        return g + v

    _, report = count(ends_zeroed, x)
    assert report["tainted_launches"] == ["aten.zero_.default", "aten.add.Tensor"]
    # a destination that is also an operand is read as one: priced as its in-place twin
    _, report = count(lambda v: torch.add(v, v, out=v), x.clone())
    assert report["launches"][0]["bytes_unique"] == 2 * size


def test_a_broadcast_input_counts_its_bytes_once():
    x, bias = torch.randn(128, 256), torch.randn(256)
    _, report = count(lambda a, b: a + b, x, bias)
    assert report["launches"][0]["bytes_unique"] == (2 * 128 * 256 + 256) * 4


# --- ops ATen runs on CUDA as several kernels or passes (gpus.yaml aten_structure) ----------------------
def _moved(report) -> list[int]:
    return [r["bytes_unique"] for r in report["launches"]]


def test_logsumexp_is_the_nine_launches_aten_runs_with_six_passes_over_the_input():
    x = torch.randn(64, 1000)
    _, report = count(lambda v: torch.logsumexp(v, dim=-1), x)
    moved = _moved(report)
    assert [r["name"] for r in report["launches"]] == [f"aten.logsumexp.default [{i}/9]" for i in range(1, 10)]
    x_bytes, row_bytes = x.numel() * 4, 64 * 4
    # amax, sub (reads x and the maxes, writes a temporary), exp, sum: six passes of x's size
    assert moved[0] == x_bytes + row_bytes and moved[4] == 2 * x_bytes + row_bytes
    assert moved[5] == 2 * x_bytes and moved[6] == x_bytes + row_bytes
    assert sum(moved) - 6 * x_bytes < 20 * row_bytes   # the rest is per-row vectors


def test_softmax_rereads_a_long_unaligned_row_and_reads_an_aligned_or_short_one_once():
    short, aligned, odd = torch.randn(8, 1000), torch.randn(8, 4096), torch.randn(8, 2049)
    for x, reads in ((short, 1), (aligned, 1), (odd, 3)):
        for op in (torch.softmax, torch.log_softmax):
            _, report = count(lambda v: op(v, dim=-1), x)
            assert _moved(report) == [(reads + 1) * x.numel() * 4], (op, x.shape)
    # not the last dimension: cunn_SpatialSoftMaxForward's three loops (softmax over dim 0 of x.t() is no
    # cheaper way to a row softmax: red team a182)
    for x in (odd, aligned):
        _, report = count(lambda v: torch.softmax(v.t(), dim=0), x)
        assert _moved(report) == [4 * x.numel() * 4], x.shape


def test_layer_norm_reads_its_input_twice_in_one_kernel_or_two():
    for n, kernels in ((4096, 1), (2049, 2)):
        x, w, b = torch.randn(8, n), torch.randn(n), torch.randn(n)
        _, report = count(lambda *a: torch.nn.functional.layer_norm(a[0], (n,), a[1], a[2]), x, w, b)
        assert len(report["launches"]) == kernels
        stats = 2 * 8 * 4   # mean and rstd per row
        assert sum(_moved(report)) == 3 * x.numel() * 4 + 2 * n * 4 + stats * kernels


def test_group_norm_reads_its_input_twice_as_layer_norm_does():
    # one group over (M, N, 1) is a layer norm of each row (red team a181): the moments kernel, then the apply
    x, w, b = torch.randn(8, 4096), torch.randn(4096), torch.randn(4096)
    _, report = count(lambda *a: torch.nn.functional.group_norm(a[0].view(8, 4096, 1), 1, a[1], a[2]), x, w, b)
    assert [r["name"] for r in report["launches"]] == [f"aten.native_group_norm.default [{i}/2]" for i in (1, 2)]
    stats = 2 * 8 * 4
    assert _moved(report) == [x.numel() * 4 + stats, 2 * x.numel() * 4 + 2 * 4096 * 4 + stats]


def test_nll_loss_and_gather_read_the_elements_they_pick_not_the_whole_input():
    logits, target = torch.randn(64, 4096), torch.randint(0, 4096, (64,))
    _, report = count(lambda a, t: torch.nn.functional.cross_entropy(a, t), logits, target)
    names = [r["name"] for r in report["launches"]]
    assert names == ["aten._log_softmax.default", "aten.nll_loss_forward.default"]
    assert _moved(report)[1] == 64 * 8 + 64 * 32 + 4 + 4   # targets, one sector per row, loss, total_weight
    _, report = count(lambda a, t: a.gather(1, t[:, None]), logits, target)
    assert _moved(report) == [64 * 8 + 64 * 32 + 64 * 4]


def test_unsafe_view_launches_nothing():
    # a 4-D matmul is a bmm whose result is re-viewed with aten._unsafe_view (an alias, no copy)
    q, k = torch.randn(2, 3, 16, 8), torch.randn(2, 3, 8, 16)
    _, report = count(lambda a, b: a @ b, q, k)
    assert [r["name"] for r in report["launches"]] == ["aten.bmm.default"]
