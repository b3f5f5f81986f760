"""Small @triton.jit helpers composed in the kernel (sum of squares, reciprocal RMS, scaled store); the row
stride and block come from the host; a descriptive module with a constant epsilon."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

RMS_NORM_EPSILON = 1e-6


@triton.jit
def _sum_of_squares(row_pointer, number_of_columns, BLOCK: tl.constexpr):
    accumulated_squares = tl.zeros([BLOCK], dtype=tl.float32)
    for column_start in range(0, number_of_columns, BLOCK):
        columns = column_start + tl.arange(0, BLOCK)
        values = tl.load(row_pointer + columns, mask=columns < number_of_columns, other=0.0)
        accumulated_squares += values * values
    return tl.sum(accumulated_squares, axis=0)


@triton.jit
def _reciprocal_root_mean_square(sum_of_squares, number_of_columns, epsilon):
    return 1.0 / tl.sqrt(sum_of_squares / number_of_columns + epsilon)


@triton.jit
def rms_normalize_rows_kernel(input_pointer, weight_pointer, output_pointer, row_stride, number_of_columns,
                              epsilon, BLOCK: tl.constexpr):
    row_index = tl.program_id(0)
    row_pointer = input_pointer + row_index * row_stride
    inverse_rms = _reciprocal_root_mean_square(_sum_of_squares(row_pointer, number_of_columns, BLOCK),
                                               number_of_columns, epsilon)
    for column_start in range(0, number_of_columns, BLOCK):
        columns = column_start + tl.arange(0, BLOCK)
        in_bounds = columns < number_of_columns
        values = tl.load(row_pointer + columns, mask=in_bounds, other=0.0)
        weights = tl.load(weight_pointer + columns, mask=in_bounds, other=0.0)
        tl.store(output_pointer + row_index * row_stride + columns, values * inverse_rms * weights, mask=in_bounds)


class ModelNew(nn.Module):
    """RMSNorm over the last dimension with a per-column weight."""

    def __init__(self):
        super().__init__()

    def forward(self, x, weight):
        assert x.shape[-1] == weight.shape[0], "weight must match the last dimension"
        input_rows = x.contiguous().view(-1, x.shape[-1])
        number_of_rows, number_of_columns = input_rows.shape
        output_rows = torch.empty_like(input_rows)
        block = min(triton.next_power_of_2(number_of_columns), 2048)
        rms_normalize_rows_kernel[(number_of_rows,)](input_rows, weight, output_rows, input_rows.stride(0),
                                                     number_of_columns, RMS_NORM_EPSILON, BLOCK=block)
        return output_rows.view_as(x)
