"""The sandbox pieces a CUDA child needs (found on an H100, issue 15), checked on any Linux host with
real forked processes: a data cap that leaves address-space reservations alone, AF_UNIX sockets
allowed while every other family still kills, a compiler wrapper script's interpreter executable,
and interpreter hooks that tolerate a Triton without a hooked method."""
from __future__ import annotations

import ctypes
import os
import signal
import socket
import stat
from pathlib import Path

import pytest

from environment.evaluation.transport import sandbox


_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
MAP_FAILED = ctypes.c_void_p(-1).value


def _reserve(size: int) -> bool:
    """What the CUDA driver does at start: reserve address space, no access, nothing committed."""
    addr = _libc.mmap(None, size, 0, 0x02 | 0x20 | 0x4000, -1, 0)  # PROT_NONE, PRIVATE|ANONYMOUS|NORESERVE
    return addr not in (None, MAP_FAILED)


def _in_child(body) -> tuple[str, int]:
    """Run body() in a forked child; returns (what it wrote, wait status)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            msg = str(body())
        except BaseException as exc:
            msg = f"{type(exc).__name__}"
        os.write(w, msg.encode())
        os._exit(0)
    os.close(w)
    out = b""
    while chunk := os.read(r, 4096):
        out += chunk
    _, status = os.waitpid(pid, 0)
    os.close(r)
    return out.decode(), status


def test_the_data_cap_refuses_private_memory_but_not_an_address_space_reservation():
    def body():
        cap = sandbox.current_vm_bytes("VmData") + 256 * 2**20
        sandbox.apply_rlimits(cap, 60, 2**20, data_only=True)
        if not _reserve(16 * 2**30):  # far more address space than the cap
            return "reservation refused"
        try:
            bytearray(512 * 2**20)
        except MemoryError:
            return "reserved, then refused"
        return "allocated past the cap"

    out, status = _in_child(body)
    assert out == "reserved, then refused", out


def test_an_address_space_cap_refuses_the_reservation_the_cuda_driver_makes():
    """Why CUDA hosts cap data instead: under RLIMIT_AS the driver's reservation fails (error 2 on the H100)."""
    def body():
        sandbox.apply_rlimits(sandbox.current_vm_bytes() + 256 * 2**20, 60, 2**20)
        return "reserved" if _reserve(16 * 2**30) else "reservation refused"

    out, _ = _in_child(body)
    assert out == "reservation refused", out


@pytest.mark.skipif(not sandbox.seccomp_available(), reason="seccomp is not available on this host")
def test_cuda_children_may_open_unix_sockets_and_nothing_else():
    def unix():
        sandbox.apply_seccomp(allow_threads=True, allow_exec=True, unix_sockets=True)
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()
        return "unix ok"

    def inet():
        sandbox.apply_seccomp(allow_threads=True, allow_exec=True, unix_sockets=True)
        socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        return "inet opened"

    assert _in_child(unix)[0] == "unix ok"
    out, status = _in_child(inet)
    assert out == "" and os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSYS, (out, status)


@pytest.mark.skipif(not sandbox.seccomp_available(), reason="seccomp is not available on this host")
def test_cpu_children_still_die_on_any_socket():
    def unix():
        sandbox.apply_seccomp(allow_threads=False)
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        return "unix opened"

    out, status = _in_child(unix)
    assert out == "" and os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSYS, (out, status)


def test_a_compiler_wrapper_scripts_interpreter_and_own_folder_are_executable(tmp_path, monkeypatch):
    """The H100 image's gcc is `#!/bin/sh` exec'ing /opt/gcc/bin/gcc-real: Landlock must allow the
    shell and the toolchain's folder, or Triton's launcher build fails with PermissionError."""
    tool_dir = tmp_path / "gcc" / "bin"
    tool_dir.mkdir(parents=True)
    wrapper = tool_dir / "gcc"
    wrapper.write_text("#!/bin/sh\nexec \"$(dirname \"$0\")/gcc-real\" \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "gcc" / "lib" / "gcc").mkdir(parents=True)
    monkeypatch.setenv("CC", str(wrapper))
    roots = sandbox.c_toolchain()
    assert str(wrapper) in roots and str(tool_dir) in roots
    assert os.path.realpath("/bin/sh") in roots
    assert str(tmp_path / "gcc" / "lib" / "gcc") in roots


def test_the_interpreter_hooks_skip_a_method_this_triton_lacks():
    """Triton 3.6 (the H100 image's) has no create_dot_scaled: installing the hooks must not fail."""
    from environment.evaluation.modeled import triton_hooks

    class Builder:
        def create_dot(self):
            return 1

    triton_hooks._after(Builder, "create_dot_scaled", lambda *a: None)
    assert not hasattr(Builder, "create_dot_scaled")
    triton_hooks._after(Builder, "create_dot", lambda *a: None)
    assert Builder().create_dot() == 1


def test_a_cuda_host_gives_an_evaluation_the_time_its_gpu_shape_inputs_take_to_move(monkeypatch):
    """On the H100 an honest evaluation of gelu_bias at 8192x8192 outlasted the 120 s budget on the
    harness's own work and ended as the submission's timeout; a CUDA host's default is 600 s."""
    from environment.config import harness_config
    monkeypatch.delenv("KERNEL_ENV_TOTAL_TIMEOUT_S", raising=False)
    monkeypatch.setenv("KERNEL_ENV_BACKEND", "cuda")
    assert harness_config().total_timeout_s == 600.0
    monkeypatch.setenv("KERNEL_ENV_BACKEND", "cpu")
    assert harness_config().total_timeout_s == 180.0
    monkeypatch.setenv("KERNEL_ENV_TOTAL_TIMEOUT_S", "90")
    assert harness_config().total_timeout_s == 90.0


def test_a_judged_call_that_records_nothing_imports_no_recorder():
    """A CUDA host's child imports the trace recorder nowhere before its sandbox (only CPU hosts price a
    trace), and the sandbox keeps it from reading the project's files after: a judged call there must not
    import it (found on an H100: every evaluation ended as harness_error, the reference's first trial
    raising PermissionError on replay/recorder.py). A fresh interpreter, so nothing imported it before."""
    import subprocess
    import sys
    probe = (
        "import sys, torch\n"
        "from environment.evaluation.child import commands\n"
        "assert not commands.JUDGED_CALLS_RECORDED\n"
        "out = commands._judged_call(torch.nn.ReLU(), [torch.randn(4)], torch.device('cpu'))[0]\n"
        "assert out.shape == (4,)\n"
        "print('environment.evaluation.replay.recorder' in sys.modules)\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "False"


def test_the_child_has_no_say_over_other_processes_scheduling_or_its_own_class():
    # helper-69: as root, a child reniced and re-pinned another process (slowing other evaluations into their
    # deadlines) and set itself to SCHED_DEADLINE; each is refused with EPERM, and its own affinity still works
    other = os.fork()
    if other == 0:
        signal.pause()
        os._exit(0)
    try:
        def body():
            sandbox.apply_seccomp(allow_threads=False)
            said = []
            for call in (lambda: os.setpriority(os.PRIO_PROCESS, other, 19),
                         lambda: os.sched_setaffinity(other, {0}),
                         lambda: os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0)),
                         lambda: os.setpriority(os.PRIO_PROCESS, 0, 19)):
                try:
                    call()
                    said.append("allowed")
                except PermissionError:
                    said.append("refused")
            os.sched_setaffinity(0, os.sched_getaffinity(0))
            return ",".join(said) + ",own affinity"
        out, status = _in_child(body)
        assert out == "refused,refused,refused,refused,own affinity" and os.WIFEXITED(status), (out, status)
        assert os.getpriority(os.PRIO_PROCESS, other) == os.getpriority(os.PRIO_PROCESS, 0)
    finally:
        os.kill(other, signal.SIGKILL)
        os.waitpid(other, 0)



def test_the_child_cannot_change_the_owner_or_mode_of_a_file_outside_its_sandbox(tmp_path):
    # Landlock does not govern file metadata: as root, a child chmod-ed and chown-ed a file it could only read
    # (any file of the service: a denial of service); each is refused with EPERM, whatever the descriptor
    victim = tmp_path / "service_file.py"
    victim.write_text("x = 1\n")
    victim.chmod(0o644)
    before = victim.stat()

    def body():
        sandbox.apply_seccomp(allow_threads=False)
        said = []
        fd = os.open(victim, os.O_RDONLY)
        for call in (lambda: os.chmod(victim, 0), lambda: os.fchmod(fd, 0o777),
                     lambda: os.chown(victim, 1234, 1234), lambda: os.fchown(fd, 1234, 1234),
                     lambda: os.setxattr(victim, "user.mark", b"1")):
            try:
                call()
                said.append("allowed")
            except PermissionError:
                said.append("refused")
        return ",".join(said)
    out, status = _in_child(body)
    assert out == "refused,refused,refused,refused,refused" and os.WIFEXITED(status), (out, status)
    after = victim.stat()
    assert (after.st_mode, after.st_uid, after.st_gid) == (before.st_mode, before.st_uid, before.st_gid)
