import FacewireVocabulary
import Logging

extension Logger {
    /// Writes a core's log line at its level, with its metadata.
    public func write(_ line: LogLine) {
        let metadata = line.metadata.mapValues { Logger.MetadataValue.string($0) }
        log(level: line.level.loggerLevel, "\(line.message)", metadata: metadata)
    }

    /// Writes a core's log lines, in order.
    public func write(_ lines: [LogLine]) {
        for line in lines { write(line) }
    }
}

extension Counters {
    /// Adds a core's counter increments, in order.
    public func add(_ increments: [CounterIncrement]) {
        for increment in increments { add(increment.name, increment.amount) }
    }
}

extension LogLine.Level {
    /// The logger's level for a core's.
    public var loggerLevel: Logger.Level {
        switch self {
        case .debug: .debug
        case .info: .info
        case .notice: .notice
        case .warning: .warning
        case .error: .error
        }
    }
}
