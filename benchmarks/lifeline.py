"""Child processes of the benchmark and evaluation scripts end with the script, however it ends (kill -9 included).

install(): every facewire process this script starts (directly, or through a wrapper such as `ip netns exec` or
`timeout`) finds this script's PID in FACEWIRE_PARENT_PID and stops when this script is gone (the binary's
ParentLifeline: SIGTERM, then SIGKILL 5 s later); every child the main thread starts with subprocess also gets
Linux's parent-death signal (SIGTERM), which covers Python children. watch_parent(): for a Python child script (benchmarks/compare/pipelines.py), the same watch as
the binary's, from a daemon thread.
"""
import ctypes
import os
import signal
import subprocess
import threading
import time

KEY = "FACEWIRE_PARENT_PID"
PR_SET_PDEATHSIG = 1


def _parent_death_signal():
    # Runs in the child between fork and exec: nothing but the system call.
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def install():
    os.environ[KEY] = str(os.getpid())
    original = subprocess.Popen.__init__
    if getattr(original, "facewire_lifeline", False):
        return

    def init(self, *args, **kwargs):
        # The signal comes when the *thread* that started the child ends: only children of the main thread get it.
        # A child started in a session of its own is a daemon meant to outlive the script (dockerd): none either.
        if kwargs.get("preexec_fn") is None and not kwargs.get("start_new_session") \
                and threading.current_thread() is threading.main_thread():
            kwargs["preexec_fn"] = _parent_death_signal
        original(self, *args, **kwargs)

    init.facewire_lifeline = True
    subprocess.Popen.__init__ = init


def watch_parent(interval=0.25):
    """Ends this process (SIGTERM to itself, then os._exit 5 s later) when the process named by FACEWIRE_PARENT_PID,
    or this process's parent, is gone. Nothing when the variable is not set."""
    try:
        watched = int(os.environ.get(KEY, ""))
    except ValueError:
        return
    if watched <= 1:
        return
    parent = os.getppid()

    def alive(pid):
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False
        except PermissionError:
            return True

    def watch():
        while alive(watched) and os.getppid() == parent:
            time.sleep(interval)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        os._exit(1)

    threading.Thread(target=watch, name="parent-lifeline", daemon=True).start()
