"""Sandbox layers applied inside a child right before candidate code is imported.

Layers (each stops attacks the others miss; see the README table):
  rlimits   memory, CPU time, file size, no core dumps
  Landlock  filesystem: read-only system and Python dirs, read-write only the child's temp dir,
            no TCP bind/connect (ABI >= 4), no signals or abstract sockets outside the domain (ABI >= 6)
  seccomp   kills the process on fork/exec, signals to others, ptrace, sockets, namespaces, ...
  audit     a Python audit hook: a tripwire that logs, not a wall (it can be bypassed in-process)
The child holds no secret, no reference output and no verdict, so defeating a layer in-process
gains nothing but what that layer guarded.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import platform
import resource
import sys
import sysconfig
from pathlib import Path
from typing import Callable, Optional

_libc = ctypes.CDLL(None, use_errno=True)
PR_SET_NO_NEW_PRIVS = 38
PR_SET_DUMPABLE = 4
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36

# Landlock (generic syscall numbers, the same on x86_64 and aarch64)
_LL_CREATE, _LL_ADD, _LL_RESTRICT = 444, 445, 446
_FS_EXECUTE, _FS_WRITE_FILE, _FS_READ_FILE, _FS_READ_DIR = 1, 2, 4, 8
_FS_ALL_V1 = (1 << 13) - 1
_FS_REFER, _FS_TRUNCATE, _FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_NET_BIND_TCP, _NET_CONNECT_TCP = 1, 2
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1, 2


def prctl(option: int, arg: int) -> int:
    return _libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0)


def landlock_abi() -> int:
    """Landlock ABI version the kernel offers, 0 when absent."""
    if platform.system() != "Linux":
        return 0
    r = _libc.syscall(_LL_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(int(r), 0)


def seccomp_available() -> bool:
    try:
        import pyseccomp  # noqa: F401
    except Exception:
        return False
    return bool(ctypes.util.find_library("seccomp"))


def probe_layers() -> dict[str, object]:
    """What this host offers; reported on /metadata and /health."""
    abi = landlock_abi()
    return {"landlock_abi": abi, "landlock": abi > 0, "seccomp": seccomp_available(), "rlimits": True,
            "audit_hook": True, "user_namespaces": os.path.exists("/proc/self/ns/user") and _userns_allowed()}


def _userns_allowed() -> bool:
    try:
        return Path("/proc/sys/kernel/unprivileged_userns_clone").read_text().strip() != "0"
    except OSError:
        return True


def apply_rlimits(memory_bytes: Optional[int], cpu_seconds: int, file_bytes: int, data_only: bool = False) -> None:
    """data_only (CUDA hosts): cap RLIMIT_DATA (private writable memory) instead of the address space,
    which the CUDA driver reserves by the tens of GiB (under RLIMIT_AS it fails to initialise)."""
    if memory_bytes:
        resource.setrlimit(resource.RLIMIT_DATA if data_only else resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def current_vm_bytes(field: str = "VmSize") -> int:
    """This process's address space (VmSize) or private writable memory (VmData), in bytes."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def triton_tools() -> list[str]:
    """Triton's bundled compiler tools (ptxas, cuobjdump) and the dynamic loader they need: the
    kernel opens an ELF program's interpreter for execution too, so Landlock must allow it."""
    try:
        import triton
    except ImportError:
        return []
    tools = Path(triton.__file__).parent / "backends" / "nvidia" / "bin"
    if not tools.is_dir():
        return []
    loaders = {os.path.realpath(p) for pattern in ("/lib64/ld-linux*.so*", "/lib/*/ld-linux*.so*", "/lib/ld-linux*.so*")
               for p in glob.glob(pattern)}
    return [str(tools), *sorted(loaders)]


def cuda_host() -> bool:
    return os.path.exists("/dev/nvidia0")


def c_toolchain() -> list[str]:
    """The compilers a CUDA child runs, resolved to real paths and named one by one (or by their
    private folders), never the whole of /usr/bin: the C compiler Triton builds its launcher stubs
    with (gcc or clang, the assembler, the linker, gcc's own programs under lib/libexec), and what
    torch.utils.cpp_extension.load_inline runs (ninja, the C++ driver, the CUDA toolkit's nvcc)."""
    import shutil
    found: set[str] = set()
    prefixes = {"/usr"}
    for tool in (os.environ.get("CC"), "cc", "gcc", "clang", "as", "ld", "ld.bfd", "ld.gold", "ninja", "c++",
                 "g++", "nvcc"):
        path = shutil.which(tool) if tool else None
        if not path:
            continue
        real = os.path.realpath(path)
        found.add(real)
        folder = os.path.dirname(real)
        if folder not in ("/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin"):
            found.add(folder)  # a toolchain's own bin dir (/opt/gcc/bin: a wrapper script, gcc-real, cc1, as)
            prefixes.add(os.path.dirname(folder))
        interpreter = _script_interpreter(real)
        if interpreter:
            found.add(interpreter)
    for prefix in prefixes:
        for base in ("lib/gcc", "libexec/gcc", "lib/llvm*/bin"):
            found.update(os.path.realpath(p) for p in glob.glob(os.path.join(prefix, base)))
    cuda = Path(os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda")
    found.update(str(cuda / sub) for sub in ("bin", "nvvm/bin") if (cuda / sub).is_dir())
    return sorted(found)


def _script_interpreter(path: str) -> Optional[str]:
    """The interpreter of a `#!` script (a compiler wrapper), resolved, or None for a binary."""
    try:
        with open(path, "rb") as fh:
            head = fh.readline(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    parts = head[2:].decode(errors="replace").split()
    return os.path.realpath(parts[0]) if parts else None


def exec_roots() -> list[str]:
    """What a child may execute: on CUDA hosts Triton's bundled compiler tools (ptxas) and the C
    toolchain it compiles its launcher with; nothing else (on CPU hosts nothing at all)."""
    if not cuda_host():
        return []
    return sorted(set(triton_tools()) | set(c_toolchain()))


def libcuda_dir() -> Optional[str]:
    """Where libcuda.so.1 lives, so that Triton in a child never runs `ldconfig -p` to find it (a
    sandboxed child may execute nothing but the compiler tools)."""
    for pattern in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
                    "/usr/local/nvidia/lib64", "/usr/local/nvidia/lib", "/usr/local/cuda/compat",
                    "/usr/local/cuda*/compat", "/usr/lib/wsl/lib"):
        for folder in sorted(glob.glob(pattern)):
            if os.path.exists(os.path.join(folder, "libcuda.so.1")):
                return folder
    return None


def cuda_writable() -> list[str]:
    """What a CUDA child writes besides its temp dir: its own threads' attributes (the driver names the
    threads it starts; refused, cudaGetDeviceCount fails with error 304) and /dev/null (the compiler's
    output goes there)."""
    return ["/proc/self/task", "/dev/null"] if cuda_host() else []


def device_nodes() -> list[str]:
    """The NVIDIA driver's device nodes a CUDA child opens read-write and issues ioctls on."""
    if not cuda_host():
        return []
    return sorted(str(p) for pattern in ("nvidia*", "nvidia-caps/*") for p in Path("/dev").glob(pattern)
                  if not p.is_dir())


def read_only_roots() -> list[str]:
    """Directories a child may read: the interpreter, its libraries and system libraries only —
    not the application (tasks and solutions), not /proc, not /tmp (other evaluations)."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, "/usr", "/lib", "/lib64", "/etc/ld.so.cache",
             "/etc/localtime", "/dev/null", "/dev/urandom", "/dev/zero", "/sys/devices/system/cpu"}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            paths.add(p)
    for entry in sys.path:
        if "site-packages" in entry or "dist-packages" in entry:
            paths.add(entry)
    if cuda_host():  # CUDA hosts: what the driver reads (its device nodes are granted by device_nodes())
        paths.update({"/proc/driver/nvidia", "/sys/bus/pci", "/sys/devices", "/proc/self", "/proc/sys/vm"})
    return sorted(p for p in paths if os.path.exists(p))


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def apply_landlock(read_only: list[str], read_write: list[str], exec_paths: list[str] = (),
                   devices: list[str] = (), scoped: bool = True) -> int:
    """Restrict the filesystem, TCP and signals of this process and its descendants. Returns the ABI
    used (0: unavailable, nothing applied)."""
    abi = landlock_abi()
    if abi <= 0:
        return 0
    fs = _FS_ALL_V1
    if abi >= 2:
        fs |= _FS_REFER
    if abi >= 3:
        fs |= _FS_TRUNCATE
    if abi >= 5:
        fs |= _FS_IOCTL_DEV
    attr = _RulesetAttr(fs, (_NET_BIND_TCP | _NET_CONNECT_TCP) if abi >= 4 else 0,
                        (_SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL) if abi >= 6 and scoped else 0)
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    ruleset = _libc.syscall(_LL_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    # Nothing may be executed (execve) but exec_paths: not the system tools, not a file the
    # submission wrote into its own directory.
    file_ro = _FS_READ_FILE
    dir_ro = file_ro | _FS_READ_DIR
    file_rw = file_ro | _FS_WRITE_FILE | (_FS_TRUNCATE if abi >= 3 else 0)
    dir_rw = fs & ~_FS_EXECUTE
    rules = ([(p, dir_ro, file_ro) for p in read_only] + [(p, dir_rw, file_rw) for p in read_write]
             + [(p, dir_ro | _FS_EXECUTE, file_ro | _FS_EXECUTE) for p in exec_paths]
             + [(p, 0, file_rw | (_FS_IOCTL_DEV if abi >= 5 else 0)) for p in devices])
    try:
        for path, access_dir, access_file in rules:
            _add_rule(ruleset, path, access_dir, access_file)
        if prctl(PR_SET_NO_NEW_PRIVS, 1) != 0:
            raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS failed")
        if _libc.syscall(_LL_RESTRICT, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return abi


def _add_rule(ruleset: int, path: str, dir_access: int, file_access: int) -> None:
    """Landlock rights on a path; rights on a file must be file rights only."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        access = dir_access if os.path.isdir(path) else file_access & (_FS_EXECUTE | _FS_WRITE_FILE |
                                                                       _FS_READ_FILE | _FS_TRUNCATE | _FS_IOCTL_DEV)
        rule = _PathBeneath(access, fd)
        if _libc.syscall(_LL_ADD, ctypes.c_int(ruleset), ctypes.c_int(1), ctypes.byref(rule), ctypes.c_uint32(0)):
            raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    finally:
        os.close(fd)


AF_UNIX = 1
KILLED_SYSCALLS = (
    "fork", "vfork", "execve", "execveat", "ptrace", "process_vm_readv", "process_vm_writev",
    "pidfd_open", "pidfd_send_signal", "pidfd_getfd", "socket", "socketpair", "setsid", "setpgid",
    "unshare", "setns", "mount", "umount2", "chroot", "pivot_root", "keyctl", "add_key", "request_key",
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "kexec_load", "init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff",
    "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "mknod", "mknodat",
)
CLONE_THREAD = 0x00010000
SCHEDULING = ("sched_setscheduler", "sched_setparam", "sched_setattr", "setpriority", "ioprio_set")
# File metadata, which Landlock does not govern: as root, a child changed the owner and mode of any file it could
# name (making the service's own files unreadable: a denial of service for every later evaluation)
OWNERS = ("chown", "fchown", "lchown", "fchownat", "setxattr", "lsetxattr", "fsetxattr", "removexattr",
          "lremovexattr", "fremovexattr")
MODES = ("chmod", "fchmod", "fchmodat", "fchmodat2")   # a CUDA host's C toolchain marks what it links executable


def _refuse(f, sc, name: str, *args) -> None:
    try:
        f.add_rule(sc.ERRNO(1), name, *args)
    except Exception:
        pass  # syscall unknown on this architecture


def apply_seccomp(allow_threads: bool, allow_exec: bool = False, unix_sockets: bool = False) -> bool:
    """Kill the process on any syscall an evaluation never needs. Signals only to itself.
    unix_sockets (CUDA hosts): the CUDA driver opens a local socket while it initialises (refused,
    cudaGetDeviceCount fails with error 304); any other address family still kills."""
    try:
        import pyseccomp as sc
    except Exception:
        return False
    f = sc.SyscallFilter(sc.ALLOW)
    for name in KILLED_SYSCALLS:
        if allow_exec and name in ("fork", "vfork", "execve"):
            continue
        if unix_sockets and name in ("socket", "socketpair"):
            f.add_rule(sc.KILL_PROCESS, name, sc.Arg(0, sc.NE, AF_UNIX))  # AF_UNIX only: no network
            continue
        try:
            f.add_rule(sc.KILL_PROCESS, name)
        except Exception:
            pass  # syscall unknown on this architecture
    pid = os.getpid()
    f.add_rule(sc.KILL_PROCESS, "kill", sc.Arg(0, sc.NE, pid))
    f.add_rule(sc.KILL_PROCESS, "tgkill", sc.Arg(0, sc.NE, pid))
    f.add_rule(sc.KILL_PROCESS, "tkill")
    f.add_rule(sc.ERRNO(38), "clone3")  # ENOSYS: glibc falls back to clone, which is filtered below
    # no say over scheduling or limits but its own (EPERM, an error a library can take): the child runs as root, and
    # renicing or re-pinning another evaluation's processes slowed them into their deadlines, and SCHED_DEADLINE
    # throttling kept its own thread runnable and idle (helper-69)
    for name in SCHEDULING:
        _refuse(f, sc, name)
    for name in ("sched_setaffinity", "prlimit64"):   # pid 0 (itself): os.sched_setaffinity(0, ...), setrlimit
        _refuse(f, sc, name, sc.Arg(0, sc.NE, 0))
    for name in OWNERS + (() if allow_exec else MODES):
        _refuse(f, sc, name)
    if not allow_exec:
        # clone without CLONE_THREAD is a fork; with it, a thread (refused unless allowed)
        f.add_rule(sc.KILL_PROCESS, "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_THREAD, 0))
        if not allow_threads:
            f.add_rule(sc.ERRNO(1), "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_THREAD, CLONE_THREAD))
    f.load()
    return True


def install_audit_tripwire(report: Callable[[str], None]) -> None:
    """Log (not block) events a kernel never needs. Bypassable in-process; the walls are above."""
    watched = {"os.system", "os.fork", "os.forkpty", "os.kill", "os.killpg", "subprocess.Popen", "socket.connect",
               "socket.bind", "ctypes.dlopen", "os.exec", "os.posix_spawn",
               "sys.setprofile", "sys.settrace", "object.__setattr__", "gc.get_objects", "gc.get_referrers"}
    seen: set[str] = set()

    def hook(event: str, args: tuple) -> None:
        if event in watched and event not in seen:
            if event == "object.__setattr__" and not (args and type(args[0]).__name__ == "module"):
                return
            seen.add(event)
            report(event)

    sys.addaudithook(hook)


def scrub_environment() -> None:
    keep = {"PATH", "HOME", "LANG", "LC_ALL", "TRITON_INTERPRET", "OMP_NUM_THREADS", "CUDA_VISIBLE_DEVICES",
            "TRITON_CACHE_DIR", "TMPDIR", "TRITON_LIBCUDA_PATH", "CC", "TORCH_EXTENSIONS_DIR", "CUDA_HOME",
            "CUDA_PATH"}
    for key in list(os.environ):
        if key not in keep:
            del os.environ[key]
