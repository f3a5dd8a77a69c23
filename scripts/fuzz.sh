#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer + AddressSanitizer) of the parsers a node runs on network input: the frame
# header and envelopes, JPEG headers and the MJPEG check (Sources/FacewireFuzzing). The corpus starts from the
# protocol's golden vectors and a JPEG, and is kept in .build-fuzz/corpus between runs.
#   scripts/fuzz.sh [SECONDS]     (default 600)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
swift build --package-path fuzz --scratch-path .build-fuzz -c debug --product FacewireFuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
corpus=.build-fuzz/corpus
mkdir -p "$corpus"
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
binary=$(swift build --package-path fuzz --scratch-path .build-fuzz -c debug --show-bin-path)/FacewireFuzz
"$binary" -max_total_time="$seconds" -max_len=65536 -print_final_stats=1 "$corpus"
