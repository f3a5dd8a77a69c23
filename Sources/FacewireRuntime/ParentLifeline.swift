import Foundation

/// Child processes end with the process that started them, whatever ends it (SIGKILL included): `facewire --role
/// local` and the benchmarks put their PID in the child's environment under ``environmentKey``, and a child that
/// finds it there watches that process from a thread of its own. When it is gone (it no longer exists, or this
/// process has been re-parented: `getppid()` changed) the child sends itself SIGTERM, its usual graceful stop, and
/// SIGKILL if it has not ended ``graceSeconds`` later. Watching the named process, not only the direct parent, keeps
/// a child started through a wrapper (`timeout`, `ip netns exec`) tied to the process that asked.
///
/// Why not Linux's parent-death signal (`PR_SET_PDEATHSIG`): it fires when the *thread* that forked the child ends,
/// not the process, and Foundation's `Process` forks from whatever thread calls `run()`; it would also need a C shim
/// (`prctl` is variadic), and it only sees the direct parent. Two system calls four times a second cost nothing
/// measurable.
public enum ParentLifeline {
    /// The environment variable that carries the parent's PID.
    public static let environmentKey = "FACEWIRE_PARENT_PID"
    /// How often the parent is checked.
    public static let interval: TimeInterval = 0.25
    /// How long the graceful stop may take before the child kills itself.
    public static let graceSeconds: TimeInterval = 5

    /// The parent PID a child should watch, from its environment: `nil` when absent or not a PID (1...2^22; PID 1 is
    /// init, whose children are orphans already).
    public static func expectedParent(environment: [String: String]) -> pid_t? {
        guard let text = environment[environmentKey], let value = Int32(text), value > 1, value <= 1 << 22 else { return nil }
        return value
    }

    /// The environment for a child of this process: `base` with this process's PID under ``environmentKey``.
    public static func childEnvironment(_ base: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
        var environment = base
        environment[environmentKey] = String(getpid())
        return environment
    }

    /// Whether the watched process is gone: it no longer exists, or this process's parent changed (re-parented to
    /// init or a subreaper when its parent died).
    public static func parentGone(watchedExists: Bool, initialParent: pid_t, currentParent: pid_t) -> Bool {
        !watchedExists || currentParent != initialParent
    }

    /// Whether process `pid` exists (signal 0: ESRCH means it does not; EPERM means it does, another user's).
    static func exists(_ pid: pid_t) -> Bool { kill(pid, 0) == 0 || errno != ESRCH }

    /// Starts watching when the environment names a process. One already gone (it died before this process got
    /// here) ends this process at once, with status 1.
    public static func watchIfAsked(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let watched = expectedParent(environment: environment) else { return }
        let initialParent = getppid()
        @Sendable func gone() -> Bool { parentGone(watchedExists: exists(watched), initialParent: initialParent, currentParent: getppid()) }
        if !exists(watched) || initialParent == 1 {
            FileHandle.standardError.write(Data("facewire: the process that started this one (\(watched)) is gone; not starting\n".utf8))
            exit(1)
        }
        let thread = Thread {
            while !gone() { Thread.sleep(forTimeInterval: interval) }
            kill(getpid(), SIGTERM)
            Thread.sleep(forTimeInterval: graceSeconds)
            kill(getpid(), SIGKILL)
        }
        thread.name = "parent-lifeline"
        thread.start()
    }
}
