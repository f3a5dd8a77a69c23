"""What benchmarks/bench-transport.py and benchmarks/bench-python.py share: the CPU time of process trees read from
/proc, a steady-state meter over a stream of output lines, medians and Markdown tables. Standard library only; Linux.

How CPU is counted: utime + stime of every process of a pipeline (all its threads, /proc/PID/stat), summed over the
pipeline's root processes and all their descendants. The steady-state figure is the difference between two
snapshots of that sum, taken when the warm-up line and the last line reach the reader, so start-up (imports, model
loading, connecting) and shutdown are not counted. /proc counts in clock ticks (10 ms): with 4-6 processes over a
few seconds of CPU that is within about 1 %. The whole-run figure (os.wait4 of the root, which includes every
descendant it reaped) is printed beside it where the root waits for its children.
"""
import os
import statistics
import subprocess
import sys
import threading
import time

TICKS = os.sysconf("SC_CLK_TCK")


def log(line):
    print(line, file=sys.stderr, flush=True)


def process_table():
    """{pid: (ppid, CPU seconds)} of every process on the machine."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        table[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS)
    return table


def cpu_seconds(pid):
    """utime + stime of one process (all its threads) so far; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    except (FileNotFoundError, ProcessLookupError):
        return 0.0


def command_line(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return [part.decode(errors="replace") for part in handle.read().split(b"\0") if part]
    except OSError:
        return []


def tree_cpu(roots):
    """{pid: CPU seconds} of the processes `roots` and every live descendant."""
    table = process_table()
    children = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    result, stack = {}, list(roots)
    while stack:
        pid = stack.pop()
        if pid in table and pid not in result:
            result[pid] = table[pid][1]
            stack += children.get(pid, [])
    return result


class SteadyMeter:
    """Seconds and CPU between two moments of a run (`mark_start()` at the warm-up line, `mark_end()` at the last):
    `result(frames)` gives frames per second and CPU per frame, in all and per process. `label(pid)` names a process
    for the breakdown (processes with the same label are added up).

    Between the marks a thread reads the tree every 100 ms, so a process that exits inside the window (a sender or
    capture node that has sent its last frame while the last results are still on their way) counts with its last
    reading instead of disappearing from the sum."""

    def __init__(self, roots, label, interval=0.1):
        self.roots, self.label, self.interval = roots, label, interval
        self.start = self.end = None
        self.names, self.last_seen = {}, {}
        self.done = threading.Event()
        self.sampler = None

    def _snapshot(self):
        when = time.monotonic()
        cpu = tree_cpu(self.roots)
        for pid in cpu:
            if pid not in self.names:
                self.names[pid] = self.label(pid)
        self.last_seen.update(cpu)
        return when, cpu

    def _sample(self):
        while not self.done.wait(self.interval):
            self._snapshot()

    def mark_start(self):
        self.start = self._snapshot()
        self.sampler = threading.Thread(target=self._sample, daemon=True)
        self.sampler.start()

    def mark_end(self):
        if self.sampler:
            self.done.set()
            self.sampler.join()
        self.end = self._snapshot()

    def result(self, frames):
        """{"frames", "seconds", "fps", "cpu_ms" (per frame), "by_process": {label: CPU ms per frame}}, or None when
        a mark is missing."""
        if self.start is None or self.end is None or frames <= 0:
            return None
        seconds = self.end[0] - self.start[0]
        by_process = {}
        for pid, cpu in self.last_seen.items():
            name = self.names[pid]
            by_process[name] = by_process.get(name, 0.0) + 1000 * (cpu - self.start[1].get(pid, 0.0)) / frames
        return {"frames": frames, "seconds": seconds, "fps": frames / seconds if seconds > 0 else float("nan"),
                "cpu_ms": sum(by_process.values()), "by_process": by_process, "processes": len(self.last_seen)}


def read_stream(process, meter, warm, expected, on_line=None):
    """Reads `process`'s stdout lines; marks the meter at line `warm` and at line `expected` - 1 (0-based), calls
    `on_line(text)` for each line and returns the number of lines read (the process ends the stream)."""
    count = 0
    for text in process.stdout:
        if count == warm:
            meter.mark_start()
        if count == expected - 1:
            meter.mark_end()
        if on_line:
            on_line(text)
        count += 1
    return count


def facewire_label(pid):
    """`capture`, `worker`, `collector`, `tail` or `local` from a facewire process's --role."""
    arguments = command_line(pid)
    if "--role" in arguments:
        index = arguments.index("--role")
        if index + 1 < len(arguments):
            return arguments[index + 1]
    return os.path.basename(arguments[0]) if arguments else "?"


def wait_for_line(path, text, process, seconds=60):
    """Waits until the file `path` (a process's stderr) holds `text`; fails if the process exits first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(path, errors="replace") as handle:
                if text in handle.read():
                    return
        except FileNotFoundError:
            pass
        if process.poll() is not None:
            raise RuntimeError(f"{' '.join(process.args)} exited ({process.returncode}) before '{text}':\n{tail(path)}")
        time.sleep(0.02)
    raise RuntimeError(f"no '{text}' from {' '.join(process.args)} within {seconds} s:\n{tail(path)}")


def tail(path, lines=15):
    try:
        with open(path, errors="replace") as handle:
            return "".join(handle.readlines()[-lines:])
    except FileNotFoundError:
        return ""


def stop(processes, seconds=10):
    """SIGTERM to each process still running (only ours, by pid), then SIGKILL after `seconds`; reaps them all."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
    deadline = time.monotonic() + seconds
    for process in processes:
        try:
            process.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float("nan")


def table(headers, rows):
    """A Markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def spread(values, digits=2):
    """'median (each round)': the figure and how the rounds spread."""
    return f"{median(values):.{digits}f} ({', '.join(f'{v:.{digits}f}' for v in values)})"
