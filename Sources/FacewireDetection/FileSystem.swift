import Foundation

/// Small file-system helpers used when locating models.
enum FileSystem {
    /// Whether `path` names an existing, readable regular file.
    static func isReadableFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            return false
        }
        return FileManager.default.isReadableFile(atPath: path)
    }
}
