"""Exploit 3 at runtime: load the task's reference.py from the application folder by path (static checks off)."""
import importlib.util

import torch.nn as nn

PATH = "/work/main/environment/tasks/problems/layernorm/reference.py"
spec = importlib.util.spec_from_file_location("stolen_reference", PATH)
stolen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(stolen)


class ModelNew(stolen.Model):
    pass
