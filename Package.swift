// swift-tools-version:6.1
import PackageDescription

// OpenCV is linked module by module: pulling all 55 libraries through pkg-config
// makes every process start 4x slower and 60 MB larger (see PLATFORM notes in BENCHMARKS.md).
let openCVLibraries: [LinkerSetting] = [
    "opencv_core", "opencv_imgproc", "opencv_dnn", "opencv_objdetect", "opencv_videoio", "opencv_imgcodecs",
].map { .linkedLibrary($0) }

let swiftSettings: [SwiftSetting] = []

let package = Package(
    name: "facewire",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "facewire", targets: ["facewire"]),
        // The parsers the fuzz package (fuzz/) feeds; a library so the main build and tests compile it too.
        .library(name: "FacewireFuzzing", targets: ["FacewireFuzzing"]),
        // The capture node's core, for the structure-aware fuzz target in fuzz/ (CaptureCoreDriver).
        .library(name: "FacewireCapture", targets: ["FacewireCapture"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.28.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // HTTP (/metrics, /healthz, later the live view). Without swift-configuration support: flags configure it.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0", traits: ["FullFoundation"]),
        // The live view's push channel (`facewire --role view`, /ws).
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
        // Hummingbird's own; named for the HTTP server's response-deadline handler.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.24.0"),
    ],
    targets: [
        // MARK: - C libraries and shims

        .systemLibrary(
            name: "CZeroMQ",
            pkgConfig: "libzmq",
            providers: [.apt(["libzmq3-dev"])]
        ),
        .systemLibrary(
            name: "CTurboJPEG",
            pkgConfig: "libturbojpeg",
            providers: [.apt(["libturbojpeg0-dev"])]
        ),
        .target(
            name: "CV4L2",
            linkerSettings: [.linkedLibrary("v4l2")]
        ),
        .target(
            name: "COpenCV",
            cxxSettings: [.unsafeFlags(["-I/usr/include/opencv4"])],
            linkerSettings: openCVLibraries
        ),

        // MARK: - Targets

        .target(
            name: "ZeroMQ",
            dependencies: ["CZeroMQ"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacewireRuntime",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacewireHTTP",
            dependencies: [
                "FacewireRuntime",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacewireProtocol",
            dependencies: [.product(name: "SwiftProtobuf", package: "swift-protobuf")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacewireImage",
            dependencies: ["CTurboJPEG"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacewireDetection",
            dependencies: ["COpenCV", "FacewireImage"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacewireCapture",
            dependencies: [
                "ZeroMQ", "FacewireRuntime", "FacewireProtocol", "COpenCV", "FacewireImage", "CV4L2",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacewireWorker",
            dependencies: [
                "ZeroMQ", "FacewireRuntime", "FacewireProtocol", "FacewireDetection",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacewireFuzzing",
            dependencies: ["FacewireProtocol", "FacewireImage", "FacewireDetection", "FacewireWorker", "FacewireCollectorCore"],
            swiftSettings: swiftSettings
        ),
        // Every decision of the collector, pure: no ZeroMQ, no clock (CollectorCore).
        .target(
            name: "FacewireCollectorCore",
            dependencies: ["FacewireProtocol"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacewireCollector",
            dependencies: [
                "ZeroMQ", "FacewireRuntime", "FacewireProtocol", "FacewireCollectorCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacewireTail",
            dependencies: [
                "ZeroMQ", "FacewireRuntime", "FacewireProtocol",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The live view: pure joins and galleries (Core/), face crops and drawn snapshots (Imaging/, OpenCV), and the
        // shell that reads the collector's stream and the capture nodes' previews and serves the page.
        .target(
            name: "FacewireView",
            dependencies: [
                "ZeroMQ", "FacewireRuntime", "FacewireProtocol", "FacewireImage", "COpenCV", "FacewireHTTP",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacewireBench",
            dependencies: ["ZeroMQ", "FacewireRuntime", "FacewireProtocol"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "facewire",
            dependencies: [
                "ZeroMQ", "FacewireRuntime", "FacewireProtocol", "FacewireImage", "FacewireDetection", "FacewireCapture",
                "FacewireWorker",
                "FacewireCollector", "FacewireCollectorCore", "FacewireTail", "FacewireHTTP", "FacewireBench", "FacewireView",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: - Tests

        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ"]),
        .testTarget(name: "FacewireProtocolTests", dependencies: ["FacewireProtocol", "FacewireTail"]),
        .testTarget(name: "FacewireTailTests", dependencies: ["FacewireTail"]),
        .testTarget(name: "FacewireFuzzingTests", dependencies: ["FacewireFuzzing"]),
        .testTarget(name: "FacewireImageTests", dependencies: ["FacewireImage"]),
        .testTarget(
            name: "FacewireDetectionTests",
            dependencies: ["FacewireDetection", "FacewireImage", "FacewireCapture", "FacewireCollector"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "FacewireWorkerTests",
            dependencies: [
                "FacewireWorker", "FacewireDetection", "FacewireProtocol", "FacewireImage", "FacewireRuntime",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(name: "FacewireCaptureTests", dependencies: ["FacewireCapture", "FacewireImage", "FacewireRuntime", "FacewireProtocol"]),
        .testTarget(name: "FacewireCollectorTests", dependencies: ["FacewireCollector", "FacewireProtocol", "FacewireRuntime", "ZeroMQ"]),
        .testTarget(name: "FacewireCollectorCoreTests", dependencies: ["FacewireCollectorCore", "FacewireProtocol"]),
        .testTarget(
            name: "FacewireViewTests",
            dependencies: ["FacewireView", "FacewireImage", "FacewireDetection", "FacewireProtocol"]
        ),
        .testTarget(name: "FacewireBenchTests", dependencies: ["FacewireBench", "FacewireCollectorCore", "FacewireProtocol"]),
        .testTarget(
            name: "FacewireIntegrationTests",
            dependencies: ["facewire", "FacewireRuntime", "FacewireProtocol", "FacewireImage", "ZeroMQ"]
        ),
    ],
    cxxLanguageStandard: .cxx17
)
