// swift-tools-version:6.0
// Coverage-guided fuzzing of what a node validates before it trusts a message: the frame header and the
// control/stream envelopes (protobuf decoding and the protocol's checks), JPEG headers (dimensions before any
// pixel is allocated) and the MJPEG marker walk. A separate package, so the main build never needs libFuzzer.
//
//   scripts/fuzz.sh [SECONDS]      builds with -sanitize=fuzzer,address and runs on a corpus seeded from
//                                  protocol/vectors and a few JPEGs
import Foundation
import PackageDescription

// A path dependency is known by its directory's name (the clone's, not "facewire").
let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

let package = Package(
    name: "facewire-fuzz",
    dependencies: [.package(path: repository.path)],
    targets: [
        // Bytes to the parsers.
        .executableTarget(
            name: "FacewireFuzz",
            dependencies: [.product(name: "FacewireFuzzing", package: repository.lastPathComponent)],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        // Structure-aware: sequences of valid messages with hostile values, driven through a node's pure core.
        .executableTarget(
            name: "FacewireFuzzWorker",
            dependencies: [.product(name: "FacewireFuzzing", package: repository.lastPathComponent)],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "FacewireFuzzCollector",
            dependencies: [.product(name: "FacewireFuzzing", package: repository.lastPathComponent)],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ]
)
