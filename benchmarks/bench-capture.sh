#!/usr/bin/env bash
# Capture-node costs, with a release build and no workers (every frame is dropped at the source after it is read,
# checked or encoded, and numbered):
#   1. YUYV and NV12 cameras (the simulated device) at 640x480 and 1280x720: the node's own "encode ms/frame";
#   2. an MJPEG byte stream on standard input (ffmpeg -f mjpeg): CPU seconds for 1000 frames of liveportrait_d19.
# Needs ffmpeg and ../shared/data for part 2. Usage: benchmarks/bench-capture.sh
set -euo pipefail
cd "$(dirname "$0")/.."
binary=.build/release/facewire
[ -x "$binary" ] || { echo "build first: swift build -c release" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/cameras.json" <<'JSON'
{"devices":[{"path":"/dev/video0","formats":[{"fourcc":"YUYV","sizes":[{"width":1280,"height":720,"fps":[30]},{"width":640,"height":480,"fps":[30]}]}]},
 {"path":"/dev/video1","formats":[{"fourcc":"NV12","sizes":[{"width":1280,"height":720,"fps":[30]},{"width":640,"height":480,"fps":[30]}]}]}]}
JSON
for device in /dev/video0 /dev/video1; do
    for size in 640x480 1280x720; do
        line=$(FACEWIRE_V4L2_SIMULATION="$work/cameras.json" timeout -s INT 12 "$binary" --role capture --source "$device" \
            --size "$size" --bind tcp://127.0.0.1:0 --stats-interval 5 2>&1 | grep "capture statistics" | tail -1 || true)
        echo "$device $size: $(grep -o 'encode [0-9.]* ms/frame' <<<"$line"), $(grep -o '[0-9.]* fps captured' <<<"$line")"
    done
done
clip=../shared/data/video/liveportrait_d19.mp4
if command -v ffmpeg >/dev/null && [ -f "$clip" ]; then
    ffmpeg -loglevel error -y -stream_loop 3 -i "$clip" -f mjpeg -q:v 3 "$work/d19.mjpeg"
    for round in 1 2 3; do
        /usr/bin/time -f "%U s user, %S s system" "$binary" --role capture --source - --bind tcp://127.0.0.1:0 \
            --stats-interval 0 < "$work/d19.mjpeg" 2>&1 | grep -o 'frames=[0-9]*\|[0-9.]* s user.*' | tr '\n' ' '
        echo "($(stat -c %s "$work/d19.mjpeg") bytes of MJPEG on stdin)"
    done
fi
