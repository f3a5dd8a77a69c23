#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer + AddressSanitizer) of what a node does with network input.
#   scripts/fuzz.sh [SECONDS] [TARGET]     (default 600 s, target "parsers")
# Targets:
#   parsers    bytes to the parsers a node runs first: the frame header and envelopes, JPEG headers and the MJPEG
#              check (FuzzTargets); the corpus starts from the protocol's golden vectors and a JPEG
#   worker     structure-aware: frame messages with hostile header values through a worker's FrameHandling
#   collector  structure-aware: control messages with hostile values from several peers, ticks and clock jumps,
#              through the collector's CollectorCore (ordering, caps and memory bounds checked)
#   capture    structure-aware: credits, frames read, camera loss and ticks through the capture node's CaptureCore
# Each target keeps its corpus in .build-fuzz/corpus-TARGET between runs. A finding is written to the current
# directory as crash-* and the run stops with a non-zero status.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
target=${2:-parsers}
case "$target" in
    parsers | worker | collector | capture) ;;
    *) echo "unknown target '$target': parsers, worker, collector or capture" >&2; exit 2 ;;
esac
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
swift build --package-path fuzz --scratch-path .build-fuzz -c debug --product FacewireFuzz \
    -Xswiftc -sanitize=fuzzer,address >&2
corpus=.build-fuzz/corpus-$target
# The parsers' corpus was .build-fuzz/corpus before there were several targets: keep what it found.
[ "$target" = parsers ] && [ -d .build-fuzz/corpus ] && [ ! -e "$corpus" ] && mv .build-fuzz/corpus "$corpus"
mkdir -p "$corpus"
if [ "$target" = parsers ]; then
    for vector in protocol/vectors/*.bin; do
        name=$(basename "$vector" .bin)
        # One seed per parser: the first byte picks it (0 frame header, 1 envelope, 2 stream message, 3 JPEG header, 4 MJPEG).
        for selector in 0 1 2 3 4; do printf "\\x0$selector" | cat - "$vector" > "$corpus/seed-$selector-$name"; done
    done
    jpeg=$(find "${XDG_CACHE_HOME:-$HOME/.cache}/facewire/demo" -name '*.jpg' 2>/dev/null | head -1 || true)
    if [ -n "$jpeg" ]; then
        printf '\x03' | cat - "$jpeg" > "$corpus/seed-jpeg-header"
        printf '\x04' | cat - "$jpeg" > "$corpus/seed-mjpeg"
    fi
elif [ -z "$(ls -A "$corpus")" ]; then
    # Structure-aware targets read any bytes as a program: a few random seeds are enough to start.
    for index in 1 2 3 4 5 6 7 8; do head -c $((index * 97)) /dev/urandom > "$corpus/seed-$index"; done
fi
binary=$(swift build --package-path fuzz --scratch-path .build-fuzz -c debug --show-bin-path)/FacewireFuzz
max_len=4096; [ "$target" = parsers ] && max_len=65536
FACEWIRE_FUZZ_TARGET=$target "$binary" -max_total_time="$seconds" -max_len=$max_len -print_final_stats=1 "$corpus"
