#!/usr/bin/env bash
# Quick start, part 2: set up (apt, PyPI model, demo footage, a browser for the live view tests, debug build) and run
# every test.
# Tests that need the project's private data (../shared/data) skip with a message when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --with-bench --with-browser --with-containers
[ -x /opt/swift/usr/bin/swift ] && export PATH=/opt/swift/usr/bin:$PATH
swift build --build-tests 2>&1 | grep -v "prohibited flag" >&2
exec swift test --skip-build "$@"
