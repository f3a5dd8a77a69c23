#!/usr/bin/python3
"""Benchmark: Facewire side by side with Python pipelines on the same machine, the same clip, the same model and the
same operating point: frames/s and CPU milliseconds per frame of every process of each pipeline.

Usage: benchmarks/bench-python.py [--binary PATH] [--source DIR] [--frames N] [--rounds N] [--model YUNET.onnx]
                               [--pipelines a,b,...] [--stages] [--smoke]
       benchmarks/bench-python.py --venv-only      (make the Python side's venv; scripts/setup.sh runs this)

The clip: --source (the demo footage, 120 JPEGs of 640x480, ~44 KB each), looped to --frames. Every pipeline sends
the JPEG files' bytes untouched (no re-encoding at the sender) and ends with one JSON line per frame, in frame
order, on the standard output of its first process, which this script reads. --source may also be a video file:
then the Python senders decode it with cv2.VideoCapture and encode each frame with cv2.imencode at quality 85, as
imagezmq's examples do; Facewire's capture node sends a motion-JPEG video's packets as they are (setup writes the
demo frames as one, astronaut.avi) and decodes and encodes other codecs (libjpeg-turbo, its default --quality 85).
The pipelines (benchmarks/compare/):
  imagezmq              imagezmq 1.2.0 REQ/REP: a sender process send_jpg's each file, one ImageHub process decodes
                        (cv2.imdecode), resizes to 320 px (INTER_AREA), detects (YuNet), writes the line, replies OK
  pool                  a multiprocessing pool over ZeroMQ: a sender PUSHes the files' bytes, 2 worker processes
                        (cv2.setNumThreads(1)) PULL, decode, resize, detect and PUSH the line to a sink that orders
  pool-reduced          the same, decoding with IMREAD_REDUCED_COLOR_2 (libjpeg's DCT-domain half scale, so no
                        resize): what Facewire's decoder does, for a careful practitioner
  pool-openvino         pool-reduced with YuNet run by OpenVINO (PyPI openvino 2026.4.1, the runtime Facewire
                        loads; one inference thread, f32, compiled for the frames' shape) and FaceDetectorYN's
                        post-processing in numpy: the strongest pipeline a practitioner builds from the same parts
  facewire-detect       `facewire --role local --workers 2 --fps max --detector yunet --model M --classifiers none
                        --landmarks none --refine-landmarks off`: boxes and the detector's 5 points, nothing else
                        (capture node, 2 workers, collector, and the local process, which is the tail)
  facewire-detect-3w    the same with 3 workers on the 2 cores (only when named): a third credit in flight hides the
                        per-frame dispatch round trip (SPEC 3.1), which shows what that round trip costs in frames/s
  facewire-default      `facewire --role local --workers 2 --fps max`: its default, CenterFace with every attribute
                        (face mesh, iris, pose, smile, eyes, quality) and tilted-face refinement; for reference
  facewire-default-yunet  the same with YuNet as the detector (only when named)
YuNet's operating point is REFERENCE-NODES.md §3.5 on every side: 320 px wide, score 0.6, NMS 0.3, top-k 5000
(benchmarks/compare/yunet.py). Each round runs every pipeline once, in the order given (interleaved), and the tables
give medians over rounds; every ratio is taken within a round and then the median taken.

Figures: frames/s and CPU ms per frame are steady state, between the line after the first 10 % of frames and the last
line (utime + stime of every process of the pipeline from /proc: benchmarks/compare/measure.py); "whole run" is
os.wait4 of the pipeline's first process (every descendant reaped, start-up and model loading included) over all
frames. Agreement: the share of frames where a pipeline reports as many faces as facewire-detect, and the mean IoU
of the most confident face where both have one. --stages adds one more run of facewire-detect and of the cheapest
OpenCV-Python pipeline (pool-reduced) under `perf record` (one perf per process, steady state only; linux-perf) and prints
where each process's CPU goes by library and the hottest symbols: with the per-process CPU and the worker's own
timings, the cost per stage. --smoke: a few frames of each pipeline; exit
1 if a pipeline failed, produced fewer lines than frames, dropped one, or found no face at all (a long run reports
frames Facewire's collector dropped on a loaded machine, `timeout`, and fails only on the others).

The Python side runs in a venv with system site packages (Debian's cv2 4.6, numpy and pyzmq, the same OpenCV that
Facewire links) plus imagezmq 1.2.0 (MIT) and openvino 2026.4.1 (Apache-2.0) pinned by hash
(benchmarks/compare/requirements.txt; the openvino wheel is the one scripts/setup.sh downloaded when it is there): created once at
${XDG_CACHE_HOME:-~/.cache}/facewire/bench-venv. The YuNet model: --model, else face_detection_yunet_2022mar.onnx in
../shared/data/models or ${XDG_CACHE_HOME:-~/.cache}/facewire/models.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import lifeline  # noqa: E402  (benchmarks/lifeline.py; the script's folder is on sys.path)
import pinned_venv  # noqa: E402  (benchmarks/pinned_venv.py)

lifeline.install()  # the processes this script starts end with it

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "compare"))
import measure  # noqa: E402

REPO = os.path.dirname(HERE)
CACHE = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
VENV = os.path.join(CACHE, "facewire", "bench-venv")
REQUIREMENTS = os.path.join(HERE, "compare", "requirements.txt")
PIPELINES = ["imagezmq", "pool", "pool-reduced", "pool-openvino", "facewire-detect", "facewire-default"]
EXTRA_PIPELINES = ["facewire-detect-3w", "facewire-default-yunet"]  # only when named in --pipelines
OPENCV_PIPELINES = ["imagezmq", "pool", "pool-reduced"]
PYTHON_PIPELINES = OPENCV_PIPELINES + ["pool-openvino"]
MODEL_NAME = "face_detection_yunet_2022mar.onnx"

parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/release/facewire")
parser.add_argument("--source", default=os.path.join(CACHE, "facewire/demo/astronaut"))
parser.add_argument("--frames", type=int, default=600)
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--model", help=f"the YuNet model ({MODEL_NAME})")
parser.add_argument("--pipelines", default=",".join(PIPELINES))
parser.add_argument("--stages", action="store_true", help="also runs under perf: cost by process and library")
parser.add_argument("--smoke", action="store_true", help="20 frames of each pipeline, one round; exit 1 on failure")
parser.add_argument("--venv-only", action="store_true", help="make the bench venv and exit (scripts/setup.sh does)")
args = parser.parse_args()
if args.smoke:
    args.frames, args.rounds = 20, 1
pipelines = args.pipelines.split(",")
for name in pipelines:
    if name not in PIPELINES + EXTRA_PIPELINES:
        sys.exit(f"unknown pipeline {name} (known: {', '.join(PIPELINES + EXTRA_PIPELINES)})")


def find_model():
    candidates = [args.model] if args.model else [
        os.path.join(os.path.dirname(REPO), "shared", "data", "models", MODEL_NAME),
        os.path.join(CACHE, "facewire", "models", MODEL_NAME)]
    for path in candidates:
        if path and os.path.isfile(path):
            return os.path.abspath(path)
    sys.exit(f"SKIP: no YuNet model ({MODEL_NAME}) at {' or '.join(c for c in candidates if c)}: pass --model PATH "
             "(opencv_zoo, MIT)")


def venv_python():
    """The bench venv's python (made once: system site packages + imagezmq and openvino pinned by hash)."""
    python = pinned_venv.make(VENV, REQUIREMENTS, system_site_packages=True,
                              find_links=os.path.join(CACHE, "facewire", "downloads"))
    check = subprocess.run([python, "-c", "import cv2, zmq, imagezmq, openvino; openvino.Core()"], capture_output=True,
                           text=True)
    if check.returncode != 0:
        sys.exit(f"the bench venv cannot import cv2, zmq, imagezmq and openvino (apt-get install python3-opencv "
                 f"python3-zmq; scripts/setup.sh installs them):\n{check.stderr}")
    return python


def command(name, model, python):
    common = ["--source", args.source, "--frames", str(args.frames)]
    script = os.path.join(HERE, "compare", "pipelines.py")
    if name == "imagezmq":
        return [python, script, "imagezmq", "--model", model] + common
    if name.startswith("pool"):
        return [python, script, "pool", "--workers", "2", "--model", model] + common + (
            ["--reduced"] if name in ("pool-reduced", "pool-openvino") else []) + (
            ["--runtime", "openvino"] if name == "pool-openvino" else [])
    workers = "3" if name == "facewire-detect-3w" else "2"
    local = [args.binary, "--role", "local", "--workers", workers, "--fps", "max", "--loop"] + common
    if name.startswith("facewire-detect"):
        return local + ["--detector", "yunet", "--model", model, "--classifiers", "none", "--landmarks", "none",
                        "--refine-landmarks", "off"]
    if name == "facewire-default-yunet":
        return local + ["--detector", "yunet", "--model", model]
    return local


def label(pid):
    arguments = measure.command_line(pid)
    if "--role" in arguments:
        return measure.facewire_label(pid)
    try:
        with open(f"/proc/{pid}/comm") as handle:
            name = handle.read().strip()
    except OSError:
        return "?"
    if any("resource_tracker" in a for a in arguments):
        return "resource-tracker"
    return name


class Stages:
    """`perf record` on every process of a running pipeline, from start() to stop(); then the CPU share by library."""

    def __init__(self, directory):
        self.directory, self.perfs = directory, []

    def start(self, root):
        for pid in measure.tree_cpu([root]):
            output = os.path.join(self.directory, f"perf-{pid}.data")
            perf = subprocess.Popen(["perf", "record", "-F", "997", "-q", "-o", output, "-p", str(pid)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.perfs.append((pid, label(pid), output, perf))
        time.sleep(0.2)

    def stop(self):
        for _, _, _, perf in self.perfs:
            perf.send_signal(signal.SIGINT)
        for _, _, _, perf in self.perfs:
            perf.wait(60)

    def shares(self, sort):
        """{process label: [(share %, key)]} from perf report --sort `sort` (processes with one label merged by
        taking the first)."""
        result = {}
        for _, name, output, _ in self.perfs:
            if name in result or not os.path.exists(output):
                continue
            report = subprocess.run(["perf", "report", "-i", output, "--no-children", "--sort", sort, "--stdio", "-q"],
                                    capture_output=True, text=True).stdout
            rows = []
            for text in report.splitlines():
                parts = text.split(None, 1)
                if len(parts) == 2 and parts[0].endswith("%"):
                    rows.append((float(parts[0][:-1]), " ".join(parts[1].split())))
            result[name] = rows
        return result


def run(name, model, python, directory, stages=None):
    """One run of a pipeline: the steady meter's figures, whole-run CPU, lines, faces per seq and worker timings."""
    stderr_path = os.path.join(directory, f"{name}.stderr")
    with open(stderr_path, "w") as stderr:
        process = subprocess.Popen(command(name, model, python), stdout=subprocess.PIPE, stderr=stderr, text=True,
                                   cwd=REPO)
    meter = measure.SteadyMeter([process.pid], label)
    warm = max(1, args.frames // 10)
    faces, timings, problems, dropped = {}, {}, [], []

    def on_line(text):
        frame = json.loads(text)
        if "seq" not in frame:
            return
        if frame.get("status") != "processed":
            dropped.append(f"seq {frame['seq']} {frame.get('status')} ({frame.get('reason')})")
        faces[frame["seq"]] = [f["bounds"] for f in frame.get("faces", [])]
        for key, value in frame.get("timings", {}).items():
            timings.setdefault(key, []).append(value)
        if stages and len(faces) == warm + 1:
            stages.start(process.pid)
        if stages and len(faces) == args.frames - 1:
            stages.stop()

    lines = measure.read_stream(process, meter, warm, args.frames, on_line)
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        problems.append(f"exit status {status}: {measure.tail(stderr_path, 5)}")
    if lines != args.frames:
        missing = [seq for seq in range(args.frames) if seq not in faces]
        problems.append(f"{lines} lines for {args.frames} frames (missing seq {missing[:5]}; stderr: "
                        f"{measure.tail(stderr_path, 5)!r})")
    if faces and not any(faces.values()):
        problems.append("no face in any frame")
    if args.smoke:
        problems += dropped  # a loaded machine may drop a frame in a long run (reported); in a smoke run it must not
    result = meter.result(args.frames - 1 - warm) or {}
    result.update(lines=lines, dropped=len(dropped), faces=faces, problems=problems,
                  whole_ms=1000 * (usage.ru_utime + usage.ru_stime) / max(1, lines),
                  timings={k: sum(v) / len(v) for k, v in timings.items()})
    return result


def iou(a, b):
    x0, y0 = max(a["x"], b["x"]), max(a["y"], b["y"])
    x1 = min(a["x"] + a["width"], b["x"] + b["width"])
    y1 = min(a["y"] + a["height"], b["y"] + b["height"])
    inter = max(0.0, x1 - x0) * max(0.0, y1 - y0)
    union = a["width"] * a["height"] + b["width"] * b["height"] - inter
    return inter / union if union > 0 else 0.0


def agreement(faces, reference):
    """(share of frames with the same face count, mean IoU of the first face where both have one)."""
    seqs = [s for s in reference if s in faces]
    if not seqs:
        return float("nan"), float("nan")
    same = sum(len(faces[s]) == len(reference[s]) for s in seqs) / len(seqs)
    ious = [iou(faces[s][0], reference[s][0]) for s in seqs if faces[s] and reference[s]]
    return same, (sum(ious) / len(ious) if ious else float("nan"))


def main():
    if args.venv_only:
        measure.log(f"bench venv ready: {venv_python()}")
        return
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"no facewire binary at {args.binary} (swift build -c release --product facewire)")
    model = find_model()
    python = venv_python() if any(p in PYTHON_PIPELINES for p in pipelines) else sys.executable
    directory = tempfile.mkdtemp(prefix="facewire-python-")
    try:
        results = {name: [] for name in pipelines}
        for round_index in range(args.rounds):
            for name in pipelines:
                result = run(name, model, python, directory)
                results[name].append(result)
                measure.log(f"round {round_index + 1}: {name}: {result.get('fps', float('nan')):.1f} frames/s, "
                            f"{result.get('cpu_ms', float('nan')):.2f} CPU ms/frame steady, {result['whole_ms']:.2f} "
                            f"whole run ({'; '.join(result['problems'][:3]) or 'ok'})")
        profiled = []
        if args.stages:
            if shutil.which("perf") is None:
                measure.log("--stages needs perf (apt-get install linux-perf): skipped")
            else:
                for name in [p for p in ("facewire-detect", "pool-reduced", "pool") if p in pipelines][:2]:
                    stages = Stages(os.path.join(directory, name))
                    os.makedirs(stages.directory)
                    profiled.append((name, stages, run(name, model, python, directory, stages)))
        report(results, model)
        for name, stages, result in profiled:
            report_stages(name, stages, result)
        failures = [(name, p) for name, rs in results.items() for r in rs for p in r["problems"]]
        for name, problem in failures[:10]:
            measure.log(f"FAILED: {name}: {problem}")
        sys.exit(1 if failures else 0)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def report(results, model):
    print(f"{args.frames} frames of {args.source} per run, {args.rounds} rounds (medians); model {model}; "
          "steady state after the first 10 % of frames")
    print()
    reference = results.get("facewire-detect", [{}])[-1].get("faces", {})
    rows = []
    for name, runs in results.items():
        same, overlap = agreement(runs[-1]["faces"], reference) if reference else (float("nan"),) * 2
        faces = sum(len(v) for v in runs[-1]["faces"].values()) / max(1, len(runs[-1]["faces"]))
        processes = measure.median([r.get("processes") for r in runs])
        dropped = sum(r["dropped"] for r in runs)
        rows.append([name, f"{measure.median([r.get('fps') for r in runs]):.1f}",
                     f"{measure.median([r.get('cpu_ms') for r in runs]):.2f}",
                     f"{measure.median([r['whole_ms'] for r in runs]):.2f}", f"{processes:.0f}", f"{faces:.2f}",
                     f"{100 * same:.1f} %", f"{overlap:.3f}", str(dropped)])
    print(measure.table(["pipeline", "frames/s", "CPU ms/frame", "CPU ms/frame, whole run", "processes",
                         "faces/frame", "same face count as facewire-detect", "IoU of first face",
                         "frames dropped (all rounds)"], rows))
    print()
    python = [p for p in PYTHON_PIPELINES if p in results]
    opencv_python = [p for p in python if p in OPENCV_PIPELINES]
    for facewire in [p for p in ("facewire-detect", "facewire-default", "facewire-default-yunet") if p in results]:
        if not python:
            break
        fw = results[facewire]
        rounds = range(min(len(fw), *(len(results[p]) for p in python)))

        def ratios(key, against):
            return [fw[i].get(key, float("nan")) / against[i].get(key, float("nan")) for i in rounds]

        # The least CPU per frame among the OpenCV-Python pipelines, round by round (the yardstick).
        best_cpu = [min(opencv_python, key=lambda p: results[p][i].get("cpu_ms", float("inf"))) for i in rounds] \
            if opencv_python else []
        rows = [[f"{p}" + (" (least CPU/frame of OpenCV-Python)" if best_cpu and all(b == p for b in best_cpu) else ""),
                 measure.spread(ratios("cpu_ms", results[p]), 3), measure.spread(ratios("fps", results[p]), 3)]
                for p in python]
        if len(set(best_cpu)) > 1:
            least = [results[best_cpu[i]][i] for i in rounds]
            rows.append([f"the OpenCV-Python one with the least CPU/frame in each round ({', '.join(best_cpu)})",
                         measure.spread(ratios("cpu_ms", least), 3), measure.spread(ratios("fps", least), 3)])
        print(measure.table([f"{facewire} against", "CPU ms/frame ratio: median (each round)",
                             "frames/s ratio: median (each round)"], rows))
        print()
    print("CPU ms per frame by process (steady state, medians; processes with the same name added up):")
    print()
    rows = []
    for name, runs in results.items():
        labels = sorted({k for r in runs for k in r.get("by_process", {})})
        parts = [f"{k} {measure.median([r.get('by_process', {}).get(k, 0.0) for r in runs]):.2f}" for k in labels]
        rows.append([name, ", ".join(parts)])
    print(measure.table(["pipeline", "process: CPU ms/frame"], rows))
    timed = [name for name in results if name.startswith("facewire")]
    if timed:
        print()
        print("Facewire workers' own timings (SPEC 12.2; means over processed frames, medians over rounds; ms of "
              "wall-clock time, so on a loaded machine they include waits for a core):")
        print()
        keys = ["queue", "decode", "detect", "classify", "total"]
        print(measure.table(["pipeline"] + keys, [
            [name] + [f"{measure.median([r['timings'].get(k) for r in results[name]]):.2f}" for k in keys]
            for name in timed]))


def report_stages(name, stages, result):
    print()
    print(f"Stages of {name} (one more run under perf, {result.get('fps', float('nan')):.1f} frames/s; "
          "perf's overhead makes its CPU figures a little higher): CPU ms per frame of each process, split by "
          "the library the samples fell in")
    print()
    rows = []
    for process, shares in stages.shares("dso").items():
        # Both workers' CPU, split by the shares of the first one's samples (they do the same work).
        cpu = result.get("by_process", {}).get(process, float("nan"))
        top = [f"{dso} {cpu * share / 100:.2f}" for share, dso in shares[:6]]
        rows.append([process, f"{cpu:.2f}", ", ".join(top)])
    print(measure.table(["process (workers: both)", "CPU ms/frame", "by library: ms/frame (largest 6)"], rows))
    print()
    rows = []
    for process, shares in stages.shares("sym").items():
        rows.append([process, "; ".join(f"{share:.1f} % {sym[:60]}" for share, sym in shares[:8])])
    print(measure.table(["process", "hottest symbols (share of the process's samples)"], rows))


if __name__ == "__main__":
    main()
