import FacewireFuzzing
import Foundation

/// The target this process fuzzes, from `FACEWIRE_FUZZ_TARGET` (scripts/fuzz.sh sets it): `parsers` (the default:
/// bytes to the parsers, ``FuzzTargets``), or a structure-aware target that turns the bytes into a sequence of valid
/// messages with hostile values and drives a node's pure core: `worker` (``WorkerFrameTarget``), `collector`
/// (``CollectorCoreTarget``) or `capture` (``CaptureCoreDriver``).
let target: @Sendable (UnsafeBufferPointer<UInt8>) -> Void = {
    let name = ProcessInfo.processInfo.environment["FACEWIRE_FUZZ_TARGET"] ?? "parsers"
    switch name {
    case "parsers": return { FuzzTargets.run($0) }
    case "worker": return { WorkerFrameTarget.run(Array($0)) }
    case "collector": return { CollectorCoreTarget.run(Array($0)) }
    case "capture": return { _ = CaptureCoreDriver.run(Array($0)) }
    default: fatalError("unknown FACEWIRE_FUZZ_TARGET '\(name)': parsers, worker, collector or capture")
    }
}()

/// libFuzzer's entry point: one input, any bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    target(UnsafeBufferPointer(start: data, count: size))
    return 0
}

/// libFuzzer's driver, from its runtime (linked by `-sanitize=fuzzer`).
@_silgen_name("LLVMFuzzerRunDriver")
func runDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// SwiftPM links an executable's entry point as `<module>_main`; it hands over to libFuzzer's driver (so libFuzzer's
/// own `main` is not needed).
@_cdecl("FacewireFuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runDriver(&count, &arguments) { data, size in fuzz(data, size) }
}
