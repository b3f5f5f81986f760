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


def test_a_broadcast_input_counts_its_bytes_once():
    x, bias = torch.randn(128, 256), torch.randn(256)
    _, report = count(lambda a, b: a + b, x, bias)
    assert report["launches"][0]["bytes_unique"] == (2 * 128 * 256 + 256) * 4
