"""What stage 1 bans, by name (modules, calls, attributes, patchable roots, exception swallowers), and the
finding a check reports: a named flag, a message that says what to change, the line."""
from __future__ import annotations

import threading
from dataclasses import dataclass

# CPython 3.11's AST constructor keeps its recursion depth in shared state, so two threads parsing at
# once can fail with "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905);
# the server checks many sessions' submissions in a thread pool.
PARSE_LOCK = threading.Lock()

FORBIDDEN_MODULES = {
    "threading": "threads", "_thread": "threads", "multiprocessing": "processes", "concurrent": "threads/processes",
    "subprocess": "processes", "_posixsubprocess": "processes", "pty": "processes", "socket": "network",
    "ssl": "network", "http": "network", "urllib": "network", "requests": "network", "asyncio": "event loops",
    "ctypes": "raw memory", "cffi": "raw memory", "mmap": "raw memory", "gc": "reading other objects",
    "inspect": "frame access", "traceback": "frame access", "signal": "signals", "pickle": "code execution",
    "marshal": "code execution", "shelve": "code execution", "importlib": "dynamic imports",
    "builtins": "patching builtins", "code": "code execution", "codeop": "code execution", "pdb": "frame access",
    "resource": "resource limits", "fcntl": "file descriptors", "posix": "raw os access", "shutil": "file writes",
    "tempfile": "file writes", "environment": "the harness itself", "reference": "the reference module",
    "torch.multiprocessing": "processes", "torch.testing": "the checker", "sysconfig": "host introspection",
    "torch.utils._python_dispatch": "the cost counter", "torch.overrides": "the cost counter",
    "triton.runtime.interpreter": "the cost counter", "triton.testing": "timers",
    "torch.jit._fork": "threads", "torch.jit.fork": "threads", "torch.jit._async": "threads",
}
FORBIDDEN_CALLS = {"exec", "eval", "compile", "__import__", "open", "globals", "vars", "breakpoint", "input",
                   "setattr", "delattr", "memoryview"}
FORBIDDEN_ATTRS = {
    "__subclasses__", "__globals__", "__code__", "__closure__", "__builtins__", "__dict__", "__class__",
    "__bases__", "__mro__", "__getattribute__", "f_back", "f_locals", "f_globals", "gi_frame", "tb_frame",
    "_getframe", "settrace", "setprofile", "addaudithook", "_current_frames", "modules",
    "fork", "forkpty", "kill", "killpg", "system", "popen", "spawnv", "spawnl", "execv", "execve", "execl",
    "execvp", "posix_spawn", "_exit", "environ", "getenv", "putenv", "unsetenv", "setsid", "setpgid",
    "from_file", "_make_subclass", "_make_wrapper_subclass", "from_dlpack",
    "interpreter", "_python_dispatch", "TorchDispatchMode", "TorchFunctionMode", "do_bench",
    "_fork",   # torch.jit._fork: inside TorchScript a task on torch's inter-op thread pool (red team a154)
}
PATCHABLE_ROOTS = {"torch", "time", "triton", "numpy", "np", "os", "sys", "math", "builtins", "environment",
                   "random", "functools", "tl"}
# Exception swallowers of the standard library, however they are reached (attribute or import).
SWALLOWERS = {"suppress", "ExitStack", "AsyncExitStack"}
EXIT_METHODS = ("__exit__", "__aexit__")


@dataclass
class Finding:
    flag: str
    message: str
    line: int
