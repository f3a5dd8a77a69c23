/// What this binary is: the release and the commit it was built from (`facewire --version`, the `facewire_build_info`
/// metric). The commit comes from the checkout SwiftPM built (the BuildCommit plugin writes `buildCommit`).
public enum BuildInfo {
    /// The release, bumped by hand when one is made (semantic versioning; `-dev` between releases).
    public static let version = "0.3.0-dev"

    /// The commit's hash (40 hex digits), or "unknown" when built outside a git checkout.
    public static let commit = buildCommit

    /// One line: `0.3.0-dev (commit 1a2b3c4d5e6f)`.
    public static var description: String {
        "\(version) (commit \(commit == "unknown" ? commit : String(commit.prefix(12))))"
    }
}
