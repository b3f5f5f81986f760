"""PyTorch's TF32 switches, now an allowed setting, turned on in a PyTorch matmul whose task refuses TF32: the candidate's process only (never the reference's, the replayer's or the sampler's), charged at the fp32 rate as before; it must earn no more than honest PyTorch."""
import torch
import torch.nn as nn

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = True
torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = True
torch.set_float32_matmul_precision("medium")


class ModelNew(nn.Module):
    def forward(self, a, b, bias):
        return torch.relu(torch.addmm(bias, a, b))
