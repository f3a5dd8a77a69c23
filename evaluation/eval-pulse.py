#!/usr/bin/env python3
"""Our pulse estimator beside pyVHR's POS and CHROM on ../shared/data/pulse, on the same colour traces (issue 16).

Runs `facewire eval --pulse --traces T --json -` (our PulseEstimator, POS and CHROM, on every region video), then
evaluation/pulse-reference.py on T (pyVHR 2.0's own cpu_POS and cpu_CHROM pipeline, in its venv), and prints one
Markdown table: per recording and region the oximeter's mean rate, ours and pyVHR's, a row per recording with the
median over its regions, then the mean absolute errors per column (per region file and per recording) beside a
constant guess (the mean of the oximeter rates).

    /usr/bin/python3 evaluation/eval-pulse.py --binary .build/release/facewire [--pulse-data ../shared/data/pulse] \
        [--window 6] [--out DIR] [--pulse-recording India/video10 ...]

Standard library only; the reference sets up its own venv on its first run. The traces, both JSON results and the
table are kept in --out (default: a new folder under /tmp).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
import lifeline  # noqa: E402

lifeline.install()  # the processes this script starts end with it

HERE = os.path.dirname(os.path.abspath(__file__))
COLUMNS = [("ours", "pos", "ours POS"), ("ours", "chrom", "ours CHROM"), ("pyvhr", "pos", "pyVHR POS"), ("pyvhr", "chrom", "pyVHR CHROM")]


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def mae(pairs):
    """(mean absolute error, count) over the pairs (estimate, truth) that have an estimate."""
    errors = [abs(estimate - truth) for estimate, truth in pairs if estimate is not None]
    return (sum(errors) / len(errors) if errors else None), len(errors)


def fmt(value, mark=""):
    return "–" if value is None else f"{value:.1f}{mark}"


def run_ours(args, traces):
    command = [args.binary, "eval", "--pulse", "--pulse-data", args.pulse_data, "--traces", traces, "--json", "-"]
    for recording in args.pulse_recording:
        command += ["--pulse-recording", recording]
    print("$ " + " ".join(command), file=sys.stderr, flush=True)
    return json.loads(subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True).stdout)


def run_reference(args, traces, output):
    command = [sys.executable, os.path.join(HERE, "pulse-reference.py"), traces, "--window", str(args.window), "--json", output]
    print("$ " + " ".join(command), file=sys.stderr, flush=True)
    subprocess.run(command, check=True)
    with open(output) as result:
        return json.load(result)


def table(ours, reference):
    """The Markdown text: the rates table, then the errors table and notes."""
    pyvhr = {(r["recording"], r["region"]): r for r in reference["regions"]}
    rows = []  # (recording, region, truth, {column: (bpm, mark)})
    recordings = []  # (recording, truth, {column: bpm})
    for recording in ours["recordings"]:
        name = recording["recording"]
        per_column = {label: [] for _, _, label in COLUMNS}
        for region in (r for r in ours["regions"] if r["recording"] == name):
            theirs = pyvhr.get((name, region["region"]), {})
            cells = {}
            for source, method, label in COLUMNS:
                rate = region[method] if source == "ours" else theirs.get(method, {})
                mark = "*" if source == "ours" and rate.get("bpm") is not None and not rate.get("confident") else ""
                cells[label] = (rate.get("bpm"), mark)
                per_column[label].append(rate.get("bpm"))
            rows.append((name, region["region"], region["input"], region["truth"], cells))
        recordings.append((name, recording["truth"], {label: median(values) for label, values in per_column.items()}))

    lines = [
        "| recording | region | input | oximeter | " + " | ".join(label for _, _, label in COLUMNS) + " |",
        "|---|---|---|---|" + "---|" * len(COLUMNS),
    ]
    for name, truth, medians in recordings:
        for row in (r for r in rows if r[0] == name):
            lines.append(
                f"| {name} | {row[1]} | {row[2]} | {row[3]:.1f} | "
                + " | ".join(fmt(*row[4][label]) for _, _, label in COLUMNS) + " |")
        lines.append(
            f"| **{name}** | median | | {truth:.1f} | " + " | ".join(fmt(medians[label]) for _, _, label in COLUMNS) + " |")

    truths = [truth for _, truth, _ in recordings]
    guess = sum(truths) / len(truths) if truths else None
    reported = [r for r in rows if r[4]["ours POS"][0] is not None and r[4]["ours POS"][1] == ""]

    def error_cells(pairs_of):
        cells = []
        for _, _, label in COLUMNS:
            value, count = mae(pairs_of(label))
            cells.append(f"{fmt(value)} (n={count})")
        return cells

    lines += [
        "",
        "| mean absolute error (bpm) | " + " | ".join(label for _, _, label in COLUMNS) + f" | constant {fmt(guess)} |",
        "|---|" + "---|" * (len(COLUMNS) + 1),
    ]
    if guess is not None:
        by_region = error_cells(lambda label: [(r[4][label][0], r[3]) for r in rows])
        by_recording = error_cells(lambda label: [(medians[label], truth) for _, truth, medians in recordings])
        on_reported = error_cells(lambda label: [(r[4][label][0], r[3]) for r in reported])
        guess_regions = mae([(guess, r[3]) for r in rows])
        guess_recordings = mae([(guess, truth) for truth in truths])
        guess_reported = mae([(guess, r[3]) for r in reported])
        lines += [
            f"| per region file | " + " | ".join(by_region) + f" | {fmt(guess_regions[0])} (n={guess_regions[1]}) |",
            f"| per recording (median of its regions) | " + " | ".join(by_recording)
            + f" | {fmt(guess_recordings[0])} (n={guess_recordings[1]}) |",
            f"| region files where ours POS reported a rate | " + " | ".join(on_reported)
            + f" | {fmt(guess_reported[0])} (n={guess_reported[1]}) |",
        ]
    lines += [
        "",
        f"Ours: PulseEstimator, window {ours['window']:g} s, band {ours['band'][0]:g}–{ours['band'][1]:g} bpm, median of "
        "the rates it reported over the file; * = it reported none (below its SNR or agreement gates), so the median of "
        "its window estimates. pyVHR " + reference["version"].split("==")[-1] + f": cpu_POS / cpu_CHROM, window "
        f"{reference['window']:g} s, stride {reference['stride']:g} s, BPfilter {reference['band_hz'][0]:g}–"
        f"{reference['band_hz'][1]:g} Hz, Welch peak, median over the windows. Both read the same traces: the mean "
        "colour of each frame (input: skin = the skin-test pixels, frame = the whole frame where the skin test keeps "
        f"too few). Constant = the mean of the {len(truths)} oximeter rates.",
    ]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(HERE, "..", ".build", "release", "facewire"), help="the facewire executable")
    parser.add_argument("--pulse-data", default="../shared/data/pulse", help="ground_truth.tsv and the region videos")
    parser.add_argument("--pulse-recording", action="append", default=[], help="only this recording (country/video); repeatable")
    parser.add_argument("--window", type=float, default=6, help="pyVHR's window (s); 6 is pyVHR's default")
    parser.add_argument("--out", help="folder for the traces, both results and the table (default: a new one under /tmp)")
    args = parser.parse_args()
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"{args.binary}: not an executable (swift build -c release --product facewire, or give --binary)")
    out = args.out or tempfile.mkdtemp(prefix="facewire-eval-pulse-")
    os.makedirs(out, exist_ok=True)
    traces = os.path.join(out, "traces.jsonl")

    ours = run_ours(args, traces)
    with open(os.path.join(out, "facewire.json"), "w") as result:
        json.dump(ours, result, indent=1)
    reference = run_reference(args, traces, os.path.join(out, "pyvhr.json"))
    text = table(ours, reference)
    with open(os.path.join(out, "table.md"), "w") as result:
        result.write(text + "\n")
    print(text)
    print(f"\n(traces, results and table in {out})", file=sys.stderr)


if __name__ == "__main__":
    main()
