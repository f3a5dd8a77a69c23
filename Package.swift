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
        // The parsers and cores the fuzz package (fuzz/) drives (CaptureCoreDriver among them); a library so the main
        // build and tests compile it too. It links no ZeroMQ and no V4L2.
        .library(name: "FacewireFuzzing", targets: ["FacewireFuzzing"]),
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
        // The collector's election client (etcd's JSON gateway); already built for hummingbird-websocket's client.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
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
        // MQTT out (collector --mqtt): libmosquitto from Debian's libmosquitto-dev.
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .target(
            name: "CV4L2",
            linkerSettings: [.linkedLibrary("v4l2")]
        ),
        // OpenVINO's C API, loaded at run time (dlopen): no build-time dependency, OpenCV's cv::dnn without it.
        .target(
            name: "COpenVINO",
            linkerSettings: [.linkedLibrary("dl")]
        ),
        .target(
            name: "COpenCV",
            dependencies: ["COpenVINO"],
            cxxSettings: [.unsafeFlags(["-I/usr/include/opencv4"])],
            linkerSettings: openCVLibraries
        ),

        // MARK: - Vocabulary: the wire, the runtime every node shares, the connection to the collector

        .target(
            name: "ZeroMQ",
            dependencies: ["CZeroMQ"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacewireRuntime",
            dependencies: [
                "FacewireVocabulary",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["BuildCommit"]
        ),
        // `facewire --version`'s commit, read from the checkout at build time (no git, or no checkout: "unknown").
        .plugin(name: "BuildCommit", capability: .buildTool()),
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
        // What a face is: one box, one point, the detected face and its attributes. Pure.
        .target(
            name: "FacewireVocabulary",
            swiftSettings: swiftSettings
        ),
        // The wire (messages, framing, limits, a face's fields) and the stream's output formats (JSON Lines, text).
        .target(
            name: "FacewireProtocol",
            dependencies: ["FacewireVocabulary", .product(name: "SwiftProtobuf", package: "swift-protobuf")],
            swiftSettings: swiftSettings
        ),
        // Every socket a node opens to the collector (CollectorSession) and the capture nodes it learns of.
        .target(
            name: "FacewireTransport",
            dependencies: ["ZeroMQ", "FacewireProtocol"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacewireImage",
            dependencies: ["CTurboJPEG"],
            swiftSettings: swiftSettings
        ),

        // The one Swift layer over COpenCV (the only module that imports it): video and image files, the native
        // detectors, the landmark networks, the cascade attributes, the live view's warps and drawing.
        .target(
            name: "FacewireOpenCV",
            dependencies: ["COpenCV", "COpenVINO", "FacewireImage"],
            swiftSettings: swiftSettings
        ),

        // MARK: - Algorithms: detection, tracking, heart rate, evaluation

        .target(
            name: "FacewireDetection",
            dependencies: ["FacewireOpenCV", "FacewireImage", "FacewireVocabulary"],
            swiftSettings: swiftSettings
        ),
        // Face tracks across frames: boxes, a Kalman filter per track, optimal assignment. Pure.
        .target(
            name: "FacewireTracking",
            dependencies: ["FacewireVocabulary"],
            swiftSettings: swiftSettings
        ),
        // Heart rate from skin colour (POS, CHROM, PBV) and its evaluation on recordings. Pure.
        .target(
            name: "FacewirePulse",
            dependencies: ["FacewireVocabulary"],
            swiftSettings: swiftSettings
        ),
        // Detection and attribute accuracy on annotated sets (`facewire eval`).
        .target(
            name: "FacewireEvaluation",
            dependencies: ["FacewireDetection", "FacewireVocabulary", "FacewireImage", "FacewireOpenCV"],
            swiftSettings: swiftSettings
        ),

        // MARK: - Roles: a pure core (no ZeroMQ: the compiler keeps it so) beside a thin shell of sockets and threads

        .target(
            name: "FacewireCaptureCore",
            dependencies: [
                "FacewireProtocol", "FacewireVocabulary",
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacewireCapture",
            dependencies: [
                "ZeroMQ", "FacewireRuntime", "FacewireProtocol", "FacewireTransport", "FacewireCaptureCore", "FacewireOpenCV",
                "FacewireImage", "CV4L2",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacewireWorkerCore",
            dependencies: ["FacewireProtocol", "FacewireDetection", "FacewireVocabulary"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacewireWorker",
            dependencies: [
                "ZeroMQ", "FacewireRuntime", "FacewireProtocol", "FacewireTransport", "FacewireWorkerCore", "FacewireVocabulary",
                "FacewireDetection",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        // Every decision of the collector, pure: no ZeroMQ, no clock (CollectorCore).
        .target(
            name: "FacewireCollectorCore",
            dependencies: ["FacewireProtocol", "FacewireVocabulary", "FacewireTracking", "FacewirePulse"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacewireCollector",
            dependencies: [
                "ZeroMQ", "CMosquitto", "FacewireRuntime", "FacewireProtocol", "FacewireCollectorCore", "FacewireVocabulary",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacewireTail",
            dependencies: [
                "ZeroMQ", "FacewireRuntime", "FacewireProtocol", "FacewireTransport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The live view's joins and galleries, pure.
        .target(
            name: "FacewireViewCore",
            dependencies: ["FacewireProtocol", "FacewireVocabulary", .product(name: "SwiftProtobuf", package: "swift-protobuf")],
            swiftSettings: swiftSettings
        ),
        // The live view's shell: face crops and drawn snapshots (Imaging/, OpenCV), the collector's stream and the
        // capture nodes' previews in, the page out.
        .target(
            name: "FacewireView",
            dependencies: [
                "ZeroMQ", "FacewireRuntime", "FacewireProtocol", "FacewireTransport", "FacewireViewCore", "FacewireVocabulary",
                "FacewireImage", "FacewireOpenCV", "FacewireHTTP",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            // The page's files, compiled into the binary as bytes (PackageResources), so a deployed binary needs no
            // resource bundle beside it.
            resources: [
                .embedInCode("Page/Assets/index.html"), .embedInCode("Page/Assets/style.css"),
                .embedInCode("Page/Assets/app.js"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: - Tools: benchmarks, test doubles, fuzz drivers, the binary

        .target(
            name: "FacewireBench",
            dependencies: ["ZeroMQ", "FacewireRuntime", "FacewireProtocol"],
            swiftSettings: swiftSettings
        ),
        // Test doubles: the simulated V4L2 camera (FACEWIRE_V4L2_SIMULATION, for tests of the real binary on a machine
        // without a camera). The fuzz drivers are in FacewireFuzzing, which links neither ZeroMQ nor V4L2.
        .target(
            name: "FacewireTesting",
            dependencies: [
                "CV4L2", "FacewireImage", "FacewireProtocol", "FacewireRuntime", "FacewireCapture",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FacewireFuzzing",
            dependencies: [
                "FacewireProtocol", "FacewireVocabulary", "FacewireImage", "FacewireDetection", "FacewireWorkerCore",
                "FacewireCollectorCore", "FacewireTracking", "FacewirePulse", "FacewireCaptureCore", "FacewireRuntime",
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "facewire",
            dependencies: [
                "ZeroMQ", "FacewireRuntime", "FacewireProtocol", "FacewireTransport", "FacewireImage", "FacewireDetection",
                "FacewireEvaluation", "FacewirePulse", "FacewireCapture", "FacewireWorker", "FacewireCollector",
                "FacewireCollectorCore", "FacewireTail", "FacewireHTTP", "FacewireBench", "FacewireView", "FacewireTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: - Tests

        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ"]),
        .testTarget(name: "FacewireProtocolTests", dependencies: ["FacewireProtocol", "FacewireVocabulary"]),
        .testTarget(name: "FacewireTransportTests", dependencies: ["FacewireTransport", "FacewireProtocol", "ZeroMQ"]),
        .testTarget(name: "FacewireTailTests", dependencies: ["FacewireTail", "FacewireProtocol"]),
        .testTarget(name: "FacewireFuzzingTests", dependencies: ["FacewireFuzzing"]),
        .testTarget(name: "FacewireImageTests", dependencies: ["FacewireImage"]),
        .testTarget(
            name: "FacewireDetectionTests",
            dependencies: [
                "FacewireDetection", "FacewireEvaluation", "FacewireOpenCV", "FacewireVocabulary", "FacewireImage",
                "FacewireCapture", "FacewireCollector", "FacewireTracking",
            ],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "FacewireRuntimeTests",
            dependencies: ["FacewireRuntime"]),
        .testTarget(
            name: "FacewireWorkerTests",
            dependencies: [
                "FacewireWorker", "FacewireWorkerCore", "FacewireDetection", "FacewireProtocol", "FacewireImage",
                "FacewireRuntime", "FacewireVocabulary",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "FacewireCaptureTests",
            dependencies: [
                "FacewireCapture", "FacewireCaptureCore", "FacewireTesting", "FacewireImage", "FacewireRuntime",
                "FacewireProtocol",
            ]),
        .testTarget(
            name: "FacewireCaptureCoreTests",
            dependencies: ["FacewireCaptureCore", "FacewireCollectorCore", "FacewireFuzzing", "FacewireRuntime", "FacewireProtocol", "FacewireVocabulary"]),
        .testTarget(
            name: "FacewireWorkerCoreTests",
            dependencies: ["FacewireWorkerCore", "FacewireDetection", "FacewireProtocol", "FacewireVocabulary", "FacewireFuzzing"]),
        .testTarget(
            name: "FacewireViewCoreTests", dependencies: ["FacewireViewCore", "FacewireProtocol", "FacewireVocabulary", "FacewireFuzzing"]),
        .testTarget(name: "FacewireTrackingTests", dependencies: ["FacewireTracking", "FacewireVocabulary", "FacewireFuzzing"]),
        .testTarget(name: "FacewirePulseTests", dependencies: ["FacewirePulse", "FacewireVocabulary", "FacewireFuzzing"]),
        .testTarget(
            name: "FacewireCollectorTests",
            dependencies: [
                "FacewireCollector", "FacewireCollectorCore", "FacewireProtocol", "FacewireRuntime", "FacewireTesting", "ZeroMQ",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]),
        .testTarget(
            name: "FacewireCollectorCoreTests",
            dependencies: [
                "FacewireCollectorCore", "FacewireTracking", "FacewirePulse", "FacewireProtocol", "FacewireVocabulary", "FacewireFuzzing",
            ]),
        .testTarget(
            name: "FacewireViewTests",
            dependencies: [
                "FacewireView", "FacewireViewCore", "FacewireVocabulary", "FacewireImage", "FacewireDetection",
                "FacewireProtocol",
            ]
        ),
        .testTarget(name: "FacewireBenchTests", dependencies: ["FacewireBench", "FacewireCollectorCore", "FacewireProtocol"]),
        .testTarget(
            name: "FacewireIntegrationTests",
            dependencies: ["facewire", "FacewireRuntime", "FacewireProtocol", "FacewireTransport", "FacewireImage", "FacewireTesting", "ZeroMQ"]
        ),
    ],
    cxxLanguageStandard: .cxx17
)
