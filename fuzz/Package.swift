// swift-tools-version:6.0
// Coverage-guided fuzzing of what a node does with network input. `parsers`: the frame header and the control and
// stream envelopes (protobuf decoding and the protocol's checks), JPEG headers (dimensions before any pixel is
// allocated) and the MJPEG marker walk. `worker`, `collector`, `capture`: structure-aware, the bytes become
// sequences of valid messages with hostile values driven through a node's pure core. A separate package, so the
// main build never needs libFuzzer.
//
//   scripts/fuzz.sh [SECONDS] [TARGET]     builds with -sanitize=fuzzer,address and runs the target on its corpus
import Foundation
import PackageDescription

// A path dependency is known by its directory's name (the clone's, not "facewire").
let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

let package = Package(
    name: "facewire-fuzz",
    dependencies: [.package(path: repository.path)],
    targets: [
        // One executable; FACEWIRE_FUZZ_TARGET picks the target (parsers, worker, collector, capture).
        .executableTarget(
            name: "FacewireFuzz",
            dependencies: [
                .product(name: "FacewireFuzzing", package: repository.lastPathComponent),
            ],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        )
    ]
)
