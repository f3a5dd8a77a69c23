#!/usr/bin/env bash
# Soak: `facewire --role local` on the demo clip at 30 frames/s, looping, with two workers, for MINUTES (default 20).
# Samples the resident memory (VmRSS) of every facewire process every 30 s and prints, per process, the first sample
# after minute 1, the last one, and the growth between them. Needs a release build.
#   scripts/soak.sh [MINUTES]
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-20}
binary=$PWD/.build/release/facewire
[ -x "$binary" ] || { echo "build first: swift build -c release" >&2; exit 1; }
work=$(mktemp -d)
"$binary" --role local --fps 30 --loop --workers 2 --format json > "$work/stream.jsonl" 2> "$work/local.log" &
local_pid=$!
trap 'kill -INT $local_pid 2>/dev/null; wait $local_pid 2>/dev/null; rm -rf "$work"' EXIT
sleep 5
end=$(( $(date +%s) + minutes * 60 ))
start=$(date +%s)
printf "%6s" "t(s)" > "$work/rss.txt"
while [ "$(date +%s)" -lt "$end" ]; do
    now=$(( $(date +%s) - start ))
    for pid in $local_pid $(pgrep -P $local_pid); do
        role=$(tr '\0' ' ' < /proc/$pid/cmdline | grep -o -- '--role [a-z]*' | cut -d' ' -f2 || true)
        [ -z "$role" ] && role=local
        kb=$(awk '/^VmRSS:/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)
        echo "$now $pid $role $kb"
    done >> "$work/samples.txt"
    sleep 30
done
frames=$(grep -c '"seq"' "$work/stream.jsonl" || true)
processed=$(grep -c '"status":"processed"' "$work/stream.jsonl" || true)
echo "soak: $minutes min, $frames frame lines ($processed processed)"
echo "process            pid     RSS at 60 s   RSS at end   growth"
awk '$1 >= 60 { if (!($2 in first)) first[$2] = $4; last[$2] = $4; role[$2] = $3 }
     END { for (p in first) printf "%-18s %-7s %8d kB   %8d kB   %+6d kB\n", role[p], p, first[p], last[p], last[p] - first[p] }' \
    "$work/samples.txt" | sort
