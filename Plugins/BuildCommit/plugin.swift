import Foundation
import PackagePlugin

/// Writes the checkout's commit into the target it is applied to (`let buildCommit = "<40 hex digits>"`, or
/// "unknown" outside a git checkout), for `facewire --version`. Rerun when the checkout's HEAD moves: its inputs are
/// `.git/HEAD` (a branch switch) and `.git/logs/HEAD` (every commit, checkout or reset appends to it).
@main
struct BuildCommit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let root = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appending(path: "BuildCommit.swift")
        let git = root.appending(path: ".git")
        let inputs = ["HEAD", "logs/HEAD", "packed-refs"].map { git.appending(path: $0) }
            .filter { FileManager.default.fileExists(atPath: $0.path) }
        // Only hex digits reach the Swift file, whatever git prints.
        let script = """
            commit=$(git -C "$1" rev-parse HEAD 2>/dev/null | tr -cd '0-9a-f' | cut -c1-40)
            printf 'let buildCommit = "%s"\\n' "${commit:-unknown}" > "$2"
            """
        return [
            .buildCommand(
                displayName: "Reading the commit for --version", executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", script, "sh", root.path, output.path], inputFiles: inputs, outputFiles: [output])
        ]
    }
}
