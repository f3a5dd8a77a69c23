import Foundation

/// The test fixtures stored in the repository beside these tests (`Fixtures/`), as opposed to ``SharedData``.
enum Fixtures {
    /// The fixture `name` (a path under `Fixtures/`).
    static func url(_ name: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").appendingPathComponent(name)
    }

    /// Each line of the JSON Lines fixture `name`, decoded as `Row`.
    static func jsonLines<Row: Decodable>(_ name: String, as row: Row.Type = Row.self) throws -> [Row] {
        let decoder = JSONDecoder()
        return try String(contentsOf: url(name), encoding: .utf8).split(separator: "\n").map {
            try decoder.decode(Row.self, from: Data($0.utf8))
        }
    }
}
