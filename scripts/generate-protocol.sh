#!/usr/bin/env bash
# Regenerates Sources/FacewireProtocol/Generated/facewire.pb.swift and the Python client's
# clients/python/facewire/facewire_pb2.py from protocol/facewire.proto.
#
# Needs `protoc` (apt-get install protobuf-compiler) and swift-protobuf's protoc-gen-swift at the
# same version as Package.swift's swift-protobuf dependency. The plugin is built on first use into
# .build-protoc/ (a few minutes); set PROTOC_GEN_SWIFT to use one you have.
set -euo pipefail
cd "$(dirname "$0")/.."
version=1.39.0
plugin=${PROTOC_GEN_SWIFT:-}
if [ -z "$plugin" ]; then
    src=.build-protoc/swift-protobuf
    if [ ! -x "$src/.build/release/protoc-gen-swift" ]; then
        rm -rf "$src"
        mkdir -p .build-protoc
        if [ "$(git -C .build/checkouts/swift-protobuf describe --tags 2>/dev/null)" = "$version" ]; then
            # The package's own checkout is the same version: no download (the build takes ~75 s then).
            cp -r .build/checkouts/swift-protobuf "$src" && rm -rf "$src/.build"
        else
            git clone --quiet --depth 1 --branch "$version" https://github.com/apple/swift-protobuf "$src"
        fi
        swift build --package-path "$src" -c release --product protoc-gen-swift
    fi
    plugin=$src/.build/release/protoc-gen-swift
fi
command -v protoc >/dev/null || { echo "protoc not found: apt-get install -y protobuf-compiler" >&2; exit 1; }
protoc --plugin=protoc-gen-swift="$plugin" \
    --swift_opt=Visibility=Public \
    --swift_out=Sources/FacewireProtocol/Generated \
    --proto_path=protocol protocol/facewire.proto
protoc --python_out=clients/python/facewire --proto_path=protocol protocol/facewire.proto
echo "generated Sources/FacewireProtocol/Generated/facewire.pb.swift and clients/python/facewire/facewire_pb2.py"
