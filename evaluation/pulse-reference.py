#!/usr/bin/env python3
"""pyVHR's POS and CHROM on the colour traces of `facewire eval --pulse --traces`: the reference (issue 16).

The numbers come from pyVHR's own code, not from a re-implementation. pyVHR 2.0 (PyPI wheel, sha256 pinned below)
is installed without its dependencies into a throwaway venv, and these files of it are loaded by path:
BVP/methods.py (cpu_POS, cpu_CHROM), BVP/BVP.py (RGB_sig_to_BVP), BVP/filters.py (apply_filter, BPfilter),
BPM/BPM.py (BVP_to_BPM, the BPM class), BPM/utils.py (Welch) and extraction/utils.py (sig_windowing). Its package
__init__ files are not run: they import everything, GPU code and GUI included. The imports that only the GPU, torch
and plotting paths use (cupy, torch, cusignal, plotly, cv2, pyVHR.plot.visualize) get stub modules that fail if
anything touches them; numpy, scipy, scikit-learn, numba and lmfit are the real, pinned packages. One name is
rebound: BPM.py's Welch, to the BPM/utils.py function it is called as (pyVHR 2.0 shadows it with extraction/utils.py's
two-argument Welch, so its own BVP_to_BPM fails with a TypeError: pyVHR issue 69).

Per trace (one region file of one recording), the steps of pyVHR's Pipeline.run_on_video with the holistic ROI and
device 'cpu', in its order and with its settings: sig_windowing (--window seconds, pyVHR's default 6, stride 1 s),
no pre-filter (pre_filt=False), RGB_sig_to_BVP with cpu_POS ({'fps': 'adaptive'}) or cpu_CHROM, the post-filter
BPfilter 0.65-4 Hz order 6, BVP_to_BPM (Welch, nfft 2048, the strongest frequency in 0.65-4 Hz). What this script
adds: the input is the trace's mean colours instead of pyVHR's own skin extraction from a face video (so both
implementations see exactly the same numbers); frames the trace left out (too few skin pixels) are filled by linear
interpolation, as pyVHR's windows count frames; and the rate of the region file is the median over its windows.

    /usr/bin/python3 evaluation/pulse-reference.py TRACES.jsonl [--window 6] [--json OUT.json]
    /usr/bin/python3 evaluation/pulse-reference.py --self-test    # a synthetic 72 bpm trace must come out at 72

The first run creates the venv (~/.cache/facewire/pulse-reference-venv, or --venv DIR) from PyPI and runs itself
in it; later runs reuse it. Output: JSON, one entry per recording and region, with pyVHR's POS and CHROM rates.
"""
import argparse
import hashlib
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import types

# What the loaded pyVHR files import, pinned (a pip freeze of a working venv, Python 3.11).
REQUIREMENTS = [
    "numpy==1.26.4",
    "scipy==1.11.4",
    "scikit-learn==1.3.2",
    "joblib==1.6.0",
    "threadpoolctl==3.8.0",
    "cloudpickle==3.1.3",
    "numba==0.59.1",
    "llvmlite==0.42.0",
    "lmfit==1.2.2",
    "asteval==1.0.10",
    "uncertainties==3.2.3",
]
PYVHR = "pyVHR==2.0"
PYVHR_WHEEL = "pyVHR-2.0-py3-none-any.whl"
PYVHR_SHA256 = "1f6df8e8945da2a0e9c9a9baee18d20a48123d558832b98034f5b0c2bb4e5d2a"

MIN_HZ, MAX_HZ, ORDER = 0.65, 4.0, 6  # pyVHR's Pipeline.minHz, maxHz and its BPfilter order
STRIDE = 1  # seconds: every pyVHR pipeline windows with stride 1


def default_venv():
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(cache, "facewire", "pulse-reference-venv")


def log(text):
    print(text, file=sys.stderr, flush=True)


# MARK: - The venv


def venv_stamp():
    return "\n".join(REQUIREMENTS + [f"{PYVHR} sha256={PYVHR_SHA256}"]) + "\n"


def ensure_venv(venv):
    """Creates the venv with the pinned packages and the hash-checked pyVHR wheel unless it is complete already."""
    python = os.path.join(venv, "bin", "python")
    stamp = os.path.join(venv, "facewire-pulse-reference.txt")
    if os.path.exists(stamp) and open(stamp).read() == venv_stamp() and os.access(python, os.X_OK):
        return python
    log(f"setting up {venv} (pinned packages from PyPI, a few minutes the first time)")
    subprocess.run([sys.executable, "-m", "venv", "--clear", venv], check=True)
    pip = [python, "-m", "pip", "--disable-pip-version-check", "--no-input", "-q"]
    subprocess.run(pip + ["install", *REQUIREMENTS], check=True)
    with tempfile.TemporaryDirectory() as download:
        subprocess.run(pip + ["download", "--no-deps", "--only-binary=:all:", "-d", download, PYVHR], check=True)
        wheel = os.path.join(download, PYVHR_WHEEL)
        digest = hashlib.sha256(open(wheel, "rb").read()).hexdigest()
        if digest != PYVHR_SHA256:
            sys.exit(f"{PYVHR_WHEEL}: sha256 {digest}, expected {PYVHR_SHA256}: not installing it")
        subprocess.run(pip + ["install", "--no-deps", wheel], check=True)
    with open(stamp, "w") as out:
        out.write(venv_stamp())
    return python


def in_venv(venv):
    return os.path.realpath(sys.prefix) == os.path.realpath(venv)


# MARK: - pyVHR, loaded by path


def stub(name, attributes=None):
    """A module for an import that the CPU path never uses: any other attribute is an error."""
    module = types.ModuleType(name)

    def missing(attribute):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        raise RuntimeError(f"{name}.{attribute}: a stub (pulse-reference.py runs pyVHR's CPU path only)")

    module.__getattr__ = missing
    for key, value in (attributes or {}).items():
        setattr(module, key, value)
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent in sys.modules:
        setattr(sys.modules[parent], child, module)
    return module


def load_pyvhr():
    """pyVHR's modules that the CPU pipeline uses, from the installed wheel's files, without its __init__ files."""
    spec = importlib.util.find_spec("pyVHR")  # finds the folder; runs nothing
    if spec is None or not spec.submodule_search_locations:
        sys.exit("pyVHR is not installed in this interpreter")
    root = list(spec.submodule_search_locations)[0]
    for name in ["cupy", "torch", "cusignal", "plotly", "plotly.graph_objects"]:
        stub(name)
    if importlib.util.find_spec("cv2") is None:
        stub("cv2")  # extraction/utils.py reads videos with it; the traces need none
    for package in ["pyVHR", "pyVHR.BVP", "pyVHR.BPM", "pyVHR.extraction", "pyVHR.plot"]:
        module = types.ModuleType(package)
        module.__path__ = [os.path.join(root, *package.split(".")[1:])]
        sys.modules[package] = module
    stub("pyVHR.plot.visualize", {"VisualizeParams": type("VisualizeParams", (), {"renderer": "browser"})})
    modules = {}
    for name in ["BVP.methods", "BVP.BVP", "BVP.filters", "BPM.utils", "BPM.BPM", "extraction.utils"]:
        modules[name] = importlib.import_module(f"pyVHR.{name}")
    # pyVHR 2.0's BPM.py star-imports BPM/utils.py and then extraction/utils.py, whose two-argument Welch(bvps, fs)
    # shadows the Welch(bvps, fps, minHz, maxHz, nfft) that BPM.BVP_to_BPM calls: a TypeError in pyVHR itself
    # (its issue 69, open). The call is meant for BPM/utils.py's, so that is the one BPM.py gets here.
    modules["BPM.BPM"].Welch = modules["BPM.utils"].Welch
    return root, modules


# MARK: - The pipeline


def uniform(trace, np):
    """The trace on every frame (index / fps): frames it left out are filled by linear interpolation."""
    fps = float(trace["fps"])
    t = np.asarray(trace["t"], dtype=np.float64)
    rgb = np.asarray(trace["rgb"], dtype=np.float64).reshape(-1, 3)
    frames = np.rint(t * fps).astype(np.int64)
    if len(frames) < 2 or np.array_equal(frames, np.arange(frames[0], frames[0] + len(frames))):
        return rgb, 0
    grid = np.arange(frames[0], frames[-1] + 1) / fps
    filled = np.stack([np.interp(grid, t, rgb[:, channel]) for channel in range(3)], axis=1)
    return filled, len(grid) - len(t)


def estimate(rgb, fps, method, window, pyvhr, np):
    """pyVHR's holistic CPU pipeline on one trace: (median bpm over windows, windows, per-window bpm)."""
    methods, bvp, filters, bpm, utils = (pyvhr[name] for name in ["BVP.methods", "BVP.BVP", "BVP.filters", "BPM.BPM", "extraction.utils"])
    sig = np.asarray(rgb, dtype=np.float32).reshape(-1, 1, 3)  # [num_frames, 1 estimator, rgb], as extract_holistic
    windowed, _ = utils.sig_windowing(sig, window, STRIDE, fps)
    if method == "pos":
        bvps = bvp.RGB_sig_to_BVP(windowed, fps, device_type="cpu", method=methods.cpu_POS, params={"fps": "adaptive"})
    else:
        bvps = bvp.RGB_sig_to_BVP(windowed, fps, device_type="cpu", method=methods.cpu_CHROM, params={})
    bvps = filters.apply_filter(
        bvps, filters.BPfilter, fps=fps, params={"minHz": MIN_HZ, "maxHz": MAX_HZ, "fps": "adaptive", "order": ORDER})
    rates = [float(np.squeeze(r)) for r in bpm.BVP_to_BPM(bvps, fps, minHz=MIN_HZ, maxHz=MAX_HZ)]
    rates = [r for r in rates if np.isfinite(r) and r > 0]  # pyVHR gives 0.0 for a window without a BVP
    return (float(np.median(rates)) if rates else None), len(rates), rates


def self_test(window, pyvhr, np):
    """pyVHR through this script on a synthetic trace with a known rate: it must find it (a check of the wiring)."""
    fps, seconds, bpm = 15.0, 60, 72.0
    t = np.arange(int(seconds * fps)) / fps
    noise = np.random.default_rng(1).normal(0, 0.0005, (len(t), 3))
    pulse = 0.003 * np.sin(2 * np.pi * bpm / 60 * t)
    light = 1 + 0.02 * np.sin(2 * np.pi * 0.05 * t)
    base, direction = np.array([160.0, 115.0, 95.0]), np.array([0.33, 0.77, 0.53])  # r, g, b; blood-volume direction
    rgb = base * light[:, None] * (1 + pulse[:, None] * direction) * (1 + noise)
    failed = False
    for method in ["pos", "chrom"]:
        rate, windows, _ = estimate(rgb, fps, method, window, pyvhr, np)
        ok = rate is not None and abs(rate - bpm) < 3
        failed |= not ok
        log(f"self-test {method}: {rate} bpm over {windows} windows (injected {bpm}): {'ok' if ok else 'FAILED'}")
    sys.exit(1 if failed else 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("traces", nargs="?", help="JSON lines from `facewire eval --pulse --traces FILE`")
    parser.add_argument("--window", type=float, default=6, help="window (s); pyVHR's default is 6 (realtime Params.winSize)")
    parser.add_argument("--json", help="write the result here (default: stdout)")
    parser.add_argument("--venv", default=default_venv(), help="the venv with pyVHR (created when missing)")
    parser.add_argument("--no-venv", action="store_true", help="run in this interpreter (it must have the packages)")
    parser.add_argument("--self-test", action="store_true", help="check the pipeline on a synthetic 72 bpm trace instead")
    args = parser.parse_args()
    if not args.traces and not args.self_test:
        parser.error("give a traces file (or --self-test)")

    if not args.no_venv and not in_venv(args.venv):
        python = ensure_venv(args.venv)
        os.execv(python, [python, os.path.abspath(__file__), *sys.argv[1:]])

    import numpy as np

    root, pyvhr = load_pyvhr()
    if args.self_test:
        self_test(args.window, pyvhr, np)
    results = []
    with open(args.traces) as lines:
        for line in lines:
            if not line.strip():
                continue
            trace = json.loads(line)
            fps = float(trace["fps"])
            rgb, filled = uniform(trace, np)
            entry = {
                "recording": trace["recording"], "region": trace["region"], "truth": trace["truth"],
                "input": trace.get("input"), "frames": len(rgb), "interpolated_frames": filled,
            }
            for method in ["pos", "chrom"]:
                rate, windows, _ = estimate(rgb, fps, method, args.window, pyvhr, np)
                entry[method] = {"bpm": rate, "windows": windows}
            results.append(entry)
            log(f"{trace['recording']} {trace['region']}: pyVHR POS {entry['pos']['bpm']}, CHROM {entry['chrom']['bpm']}")
    output = {
        "implementation": "pyVHR",
        "version": PYVHR,
        "wheel_sha256": PYVHR_SHA256,
        "source": root,
        "window": args.window,
        "stride": STRIDE,
        "band_hz": [MIN_HZ, MAX_HZ],
        "regions": results,
    }
    text = json.dumps(output, indent=1)
    if args.json:
        with open(args.json, "w") as out:
            out.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
