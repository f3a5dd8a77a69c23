import CBuildInfo

/// What this binary is: the release and the commit it was built from (`facewire --version`, the `facewire_build_info`
/// metric). The commit comes from the checkout SwiftPM built (Package.swift reads `Context.gitInformation`).
public enum BuildInfo {
    /// The release, bumped by hand when one is made (semantic versioning; `-dev` between releases).
    public static let version = "0.3.0-dev"

    /// The commit's hash, or "unknown" when built outside a git checkout.
    public static var commit: String { String(cString: fw_build_commit()) }

    /// Whether the checkout had uncommitted changes when it was built.
    public static var hasUncommittedChanges: Bool { fw_build_dirty() != 0 }

    /// One line: `0.3.0-dev (commit 1a2b3c4d5e6f)`, with `, uncommitted changes` when so.
    public static var description: String {
        let commit = self.commit
        let short = commit == "unknown" ? commit : String(commit.prefix(12))
        return "\(version) (commit \(short)\(hasUncommittedChanges ? ", uncommitted changes" : ""))"
    }
}
