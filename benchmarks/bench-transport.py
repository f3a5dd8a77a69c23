#!/usr/bin/python3
"""Benchmark: what the transport alone carries. Frames/s and CPU per frame through capture -> worker -> collector ->
tail with a detector that answers at once with no face (`--detector noop`: the worker reads only the JPEG header),
for ~40 KB and ~150 KB JPEGs, plain TCP and CURVE, next to raw libzmq on the same machine in the same run.

Usage: benchmarks/bench-transport.py [--binary PATH] [--source DIR] [--frames N] [--raw-messages N] [--workers K]
                                  [--rounds N] [--sizes 40,150] [--smoke]

Per round, for each size and for plain and CURVE, in this order (interleaved, so the machine's load hits every
configuration alike; medians over the rounds are reported):
  raw PUSH->PULL        pyzmq, two processes: a stream, PUSH keeps the pipe full (the PLATFORM.md figure)
  raw ROUTER<->DEALER   pyzmq, one ROUTER and K DEALER processes: one message per READY, Facewire's credit dialog
                        (SPEC 3.1) with nothing else: no protobuf, no result, no collector, no tail
  facewire              separate processes on loopback (`--role local` has no CURVE flags, so plain and CURVE
                        both run as separate roles, the same topology): a collector, a tail (--stream
                        --exit-on-end), K workers (--threads 1 --detector noop) and a capture node (--fps max --loop
                        over a folder of JPEGs); with CURVE every node has its key and every binding node its
                        allow-list
The frames: the first 30 JPEGs of --source (the demo footage by default) re-encoded with OpenCV at the quality that
lands nearest the target size, 640x480 for targets up to 60 KB and scaled to 1280x960 above; the raw runs send the
first of those files. frames/s and CPU are steady state: from the line after the first 10 % (the warm-up) to the last
line. CPU is utime + stime of every process of the configuration (benchmarks/compare/measure.py). --smoke runs a few
frames of each and exits 1 unless every stream came complete and in order.

The second table explains the rate: the capture node's loop is one thread, so 1 / its CPU per frame is a ceiling;
the cores / the cluster's CPU per frame is another. "what bounds it" names the ceiling the measured rate is within
15 % of; when it is near neither, the per-frame credit round trips and scheduling are what is left (BENCHMARKS.md,
"Transport capacity", says what the capture node spends its time on).

Needs /usr/bin/python3 with cv2 (python3-opencv) and zmq (python3-zmq); scripts/setup.sh installs both.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare"))
import measure  # noqa: E402

from ports import free_ports
import lifeline  # noqa: E402  (benchmarks/lifeline.py; the script's folder is on sys.path)

lifeline.install()  # the processes this script starts end with it

HERE = os.path.dirname(os.path.abspath(__file__))
RAW = os.path.join(HERE, "compare", "zmq_raw.py")
cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/release/facewire")
parser.add_argument("--source", default=os.path.join(cache, "facewire/demo/astronaut"))
parser.add_argument("--frames", type=int, default=3000, help="frames per facewire run")
parser.add_argument("--raw-messages", type=int, default=20000, help="messages per raw libzmq run")
parser.add_argument("--workers", type=int, default=2, help="worker processes (raw: DEALER processes)")
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--sizes", default="40,150", help="target JPEG sizes in KB")
parser.add_argument("--smoke", action="store_true", help="a few frames of each configuration; exit 1 on any failure")
args = parser.parse_args()
if args.smoke:
    args.frames, args.raw_messages, args.rounds = 40, 200, 1
sizes = [int(s) for s in args.sizes.split(",")]


def make_frames(directory):
    """{KB: (folder, mean bytes, width x height, quality)}: the source's first 30 frames re-encoded near each size."""
    import cv2

    names = sorted(glob.glob(os.path.join(args.source, "*.jpg")))[:30]
    if not names:
        sys.exit(f"no .jpg in {args.source} (run scripts/setup.sh for the demo footage, or pass --source DIR)")
    images = [cv2.imread(name) for name in names]
    result = {}
    for kb in sizes:
        size = (640, 480) if kb <= 60 else (1280, 960)
        frames = [cv2.resize(image, size, interpolation=cv2.INTER_CUBIC) if image.shape[1::-1] != size else image
                  for image in images]

        def encoded(quality, image):
            return cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])[1].tobytes()

        quality = min(range(5, 101), key=lambda q: abs(len(encoded(q, frames[0])) - kb * 1000))
        folder = os.path.join(directory, f"frames-{kb}k")
        os.makedirs(folder)
        total = 0
        for index, image in enumerate(frames):
            data = encoded(quality, image)
            total += len(data)
            with open(os.path.join(folder, f"frame-{index:04d}.jpg"), "wb") as handle:
                handle.write(data)
        result[kb] = (folder, total / len(frames), f"{size[0]}x{size[1]}", quality)
    return result


def make_keys(directory):
    """facewire keygen for every node; allow-lists: the collector accepts capture, workers and tail; the capture node
    accepts the workers."""
    keys = os.path.join(directory, "keys")
    for folder in ("collector-allow", "capture-allow"):
        os.makedirs(os.path.join(keys, folder))
    names = ["collector", "capture", "tail"] + [f"worker{i}" for i in range(args.workers)]
    for name in names:
        subprocess.run([args.binary, "keygen", os.path.join(keys, name)], check=True, stdout=subprocess.DEVNULL)
    for name in names[1:]:
        shutil.copy(os.path.join(keys, f"{name}.pub"), os.path.join(keys, "collector-allow"))
        if name.startswith("worker"):
            shutil.copy(os.path.join(keys, f"{name}.pub"), os.path.join(keys, "capture-allow"))
    return keys




def run_facewire(folder, curve_keys, directory):
    """One facewire run; returns the meter's result plus "lines" and "problems" (missing, out of order, dropped).
    A node that fails to start (a free port taken by someone else between our look-up and its bind, on a machine
    shared with other test runs) costs one more try, logged."""
    for attempt in (1, 2):
        try:
            return run_facewire_once(folder, curve_keys, directory)
        except RuntimeError as error:
            if attempt == 2:
                return {"problems": [f"could not start the cluster: {error}"]}
            measure.log(f"starting the cluster failed, trying again: {error}")


def run_facewire_once(folder, curve_keys, directory):
    control, publish, frames_port = (f"tcp://127.0.0.1:{p}" for p in free_ports(3))

    def curve(name, binds=None):
        if not curve_keys:
            return []
        k = lambda file: os.path.join(curve_keys, file)  # noqa: E731
        options = ["--curve-secret-key", k(f"{name}.key")]
        if name != "collector":
            options += ["--curve-server-key", k("collector.pub")]
        if binds:
            options += ["--curve-allow", k(binds)]
        return options

    processes = []

    def start(name, arguments, ready=None, stdout=subprocess.DEVNULL):
        stderr = os.path.join(directory, f"{name}.stderr")
        process = subprocess.Popen([args.binary] + arguments, stdout=stdout, stderr=open(stderr, "w"), text=True)
        processes.append(process)
        if ready:
            measure.wait_for_line(stderr, ready, process)
        return process

    try:
        start("collector", ["--role", "collector", "--bind", control, "--publish", publish]
              + curve("collector", "collector-allow"), "collector listening")
        tail = start("tail", ["--role", "tail", "--collector", control, "--stream", "bench", "--exit-on-end",
                              "--log-level", "debug"] + curve("tail"), "tail subscribed", stdout=subprocess.PIPE)
        for index in range(args.workers):
            start(f"worker{index}", ["--role", "worker", "--collector", control, "--threads", "1", "--detector",
                                     "noop", "--id", f"bench-w{index}"] + curve(f"worker{index}"), "worker running")
        meter = measure.SteadyMeter([p.pid for p in processes], measure.facewire_label)
        start("capture", ["--role", "capture", "--source", folder, "--stream", "bench", "--bind", frames_port,
                          "--collector", control, "--fps", "max", "--loop", "--frames", str(args.frames)]
              + curve("capture", "capture-allow"))
        meter.roots = [p.pid for p in processes]
        problems, expected_seq = [], [0]

        def check(text):
            frame = json.loads(text)
            if frame.get("seq") != expected_seq[0]:
                problems.append(f"seq {frame.get('seq')} where {expected_seq[0]} was due")
            elif frame.get("status") != "processed":
                problems.append(f"seq {frame['seq']} {frame.get('status')} ({frame.get('reason')})")
            expected_seq[0] = frame.get("seq", expected_seq[0]) + 1

        warm = max(1, args.frames // 10)
        lines = measure.read_stream(tail, meter, warm, args.frames, check)
        tail.wait(60)
        if lines != args.frames:
            problems.append(f"{lines} lines for {args.frames} frames")
        result = meter.result(args.frames - 1 - warm) or {}
        result.update(lines=lines, problems=problems)
        return result
    finally:
        measure.stop(processes)


def run_raw(path, payload, curve_environment):
    """A raw pyzmq run: push-pull or router-dealer; returns the meter's result."""
    environment = dict(os.environ, **(curve_environment or {}))
    flag = ["--curve"] if curve_environment else []
    warm = max(1, args.raw_messages // 10)
    receiver_role = "pull" if path == "push-pull" else "router"
    receiver = subprocess.Popen(
        [sys.executable, RAW, receiver_role, "--messages", str(args.raw_messages), "--warm", str(warm), "--file",
         payload, "--dealers", str(args.workers)] + flag, stdout=subprocess.PIPE, text=True, env=environment)
    processes = [receiver]
    try:
        port = receiver.stdout.readline().split()[1]
        senders = 1 if path == "push-pull" else args.workers
        for _ in range(senders):
            role = (["push", "--file", payload, "--messages", str(args.raw_messages)] if path == "push-pull"
                    else ["dealer"])
            processes.append(subprocess.Popen([sys.executable, RAW] + role + ["--connect", f"tcp://127.0.0.1:{port}"]
                                              + flag, env=environment))
        meter = measure.SteadyMeter([p.pid for p in processes], lambda pid: (measure.command_line(pid) + ["?"] * 3)[2])
        for text in receiver.stdout:
            if text.startswith("warm"):
                meter.mark_start()
            elif text.startswith("last"):
                meter.mark_end()
        for process in processes:
            process.wait(60)
        if any(p.returncode != 0 for p in processes):
            return {"problems": [f"exit status {[p.returncode for p in processes]}"]}
        result = meter.result(args.raw_messages - 1 - warm) or {"problems": ["no warm/last lines"]}
        result.setdefault("problems", [])
        return result
    finally:
        measure.stop(processes)


def main():
    try:
        import zmq
    except ImportError:
        sys.exit("needs python3-zmq (apt-get install python3-zmq; scripts/setup.sh installs it)")
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"no facewire binary at {args.binary} (swift build -c release --product facewire)")
    directory = tempfile.mkdtemp(prefix="facewire-transport-")
    try:
        frames = make_frames(directory)
        keys = make_keys(directory)
        server_public, server_secret = (k.decode() for k in zmq.curve_keypair())
        client_public, client_secret = (k.decode() for k in zmq.curve_keypair())
        raw_curve = {"FW_SERVER_PUBLIC": server_public, "FW_SERVER_SECRET": server_secret,
                     "FW_CLIENT_PUBLIC": client_public, "FW_CLIENT_SECRET": client_secret}
        paths = ["raw PUSH->PULL", "raw ROUTER<->DEALER", "facewire"]
        configurations = [(kb, security, path) for kb in sizes for security in ("plain", "CURVE") for path in paths]
        results = {c: [] for c in configurations}
        for round_index in range(args.rounds):
            for configuration in configurations:
                kb, security, path = configuration
                folder = frames[kb][0]
                if path == "facewire":
                    result = run_facewire(folder, keys if security == "CURVE" else None, directory)
                else:
                    payload = os.path.join(folder, "frame-0000.jpg")
                    result = run_raw("push-pull" if path.startswith("raw PUSH") else "router-dealer", payload,
                                     raw_curve if security == "CURVE" else None)
                results[configuration].append(result)
                status = "; ".join(result.get("problems", [])[:3]) or "ok"
                measure.log(f"round {round_index + 1}: {kb} KB {security} {path}: {result.get('fps', 0):.0f} frames/s, "
                            f"{result.get('cpu_ms', float('nan')):.3f} CPU ms/frame ({status})")
        report(frames, configurations, results)
        failures = [(c, p) for c, rs in results.items() for r in rs for p in r.get("problems", [])]
        if failures:
            for (kb, security, path), problem in failures[:10]:
                measure.log(f"FAILED: {kb} KB {security} {path}: {problem}")
            sys.exit(1)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def ceiling(cores, ms_per_frame):
    """Frames/s that `cores` fully busy would give at `ms_per_frame` of CPU per frame ('–' when nothing was read)."""
    return f"{1000 * cores / ms_per_frame:,.0f}" if ms_per_frame and ms_per_frame == ms_per_frame else "–"


def bound(measured, capture_ms, all_ms):
    """Which ceiling the measured rate is near (within 15 %): the capture node's loop, the cores, or neither (then the
    per-frame round trips and scheduling: the capture waits for READYs)."""
    if not measured or measured != measured:
        return "–"
    if capture_ms and measured >= 0.85 * 1000 / capture_ms:
        return "the capture node's loop"
    if all_ms and measured >= 0.85 * 1000 * os.cpu_count() / all_ms:
        return "the cores"
    return "round trips and scheduling"


def report(frames, configurations, results):
    def fps(c):
        return measure.median([r.get("fps") for r in results[c]])

    def cpu(c):
        return measure.median([r.get("cpu_ms") for r in results[c]])

    print(f"{args.rounds} rounds, medians; facewire {args.frames} frames per run with {args.workers} workers (noop "
          f"detector), raw {args.raw_messages} messages per run (ROUTER with {args.workers} DEALERs)")
    print()
    print(measure.table(["size", "frames", "JPEG quality", "mean bytes"],
                        [[f"{kb} KB", frames[kb][2], frames[kb][3], f"{frames[kb][1]:,.0f}"] for kb in sizes]))
    print()
    rows = []
    for kb, security, path in configurations:
        c = (kb, security, path)
        raw = (kb, security, "raw PUSH->PULL")
        credit = (kb, security, "raw ROUTER<->DEALER")
        plain = (kb, "plain", path)
        # Per-round ratios (same round, same load) and their median.
        ratio_raw = [a.get("fps", 0) / b["fps"] for a, b in zip(results[c], results[raw]) if b.get("fps")]
        ratio_credit = [a.get("fps", 0) / b["fps"] for a, b in zip(results[c], results[credit]) if b.get("fps")]
        ratio_plain = [a.get("fps", 0) / b["fps"] for a, b in zip(results[c], results[plain]) if b.get("fps")]
        rows.append([f"{kb} KB", security, path, f"{fps(c):,.0f}", f"{fps(c) * frames[kb][1] / 1e6:,.0f}",
                     f"{1000 * cpu(c):,.0f}", f"{measure.median(ratio_raw):.3f}",
                     f"{measure.median(ratio_credit):.3f}",
                     "1" if security == "plain" else f"{measure.median(ratio_plain):.3f}"])
    print(measure.table(["size", "security", "path", "frames/s", "MB/s", "CPU µs per frame (all processes)",
                         "÷ raw PUSH->PULL", "÷ raw ROUTER<->DEALER", "CURVE ÷ plain (frames/s)"], rows))
    print()
    # Where Facewire's CPU goes, per process.
    labels = ["capture", "worker", "collector", "tail"]
    rows = []
    for kb in sizes:
        for security in ("plain", "CURVE"):
            c = (kb, security, "facewire")
            per = {label: measure.median([r.get("by_process", {}).get(label) for r in results[c]]) for label in labels}
            # Two ceilings: the capture node's loop is one thread, so it cannot go faster than 1 / its CPU per frame;
            # the whole cluster cannot go faster than the machine's cores / its CPU per frame.
            rows.append([f"{kb} KB", security] + [f"{1000 * per[label]:,.0f}" for label in labels]
                        + [f"{1000 * cpu(c):,.0f}", f"{fps(c):,.0f}", ceiling(1, per["capture"]),
                           ceiling(os.cpu_count(), cpu(c)), bound(fps(c), per["capture"], cpu(c))])
    print("facewire, CPU µs per frame by process (workers added up), and the ceilings those imply:")
    print()
    print(measure.table(["size", "security"] + labels + ["all", "frames/s measured",
                                                         "capture-bound ceiling (1 / capture CPU)",
                                                         f"CPU-bound ceiling ({os.cpu_count()} cores / all)",
                                                         "what bounds it"], rows))


if __name__ == "__main__":
    main()
