import ArcaSystem

/// The user's synced folder (one Syncthing folder shared by every device of the circle).
/// Every file has exactly one writer, so Syncthing never has to resolve a conflict:
///
///     <device-hex>/records/<seq, 20 digits>.rec   the author's signed, sealed records
///     <device-hex>/head                           the author's signed head
///     <device-hex>/snapshot                       the author's signed, sealed snapshot (after a collection)
///     <device-hex>/approvals/<new-device-hex>      an approval the author signed for a new device
///     <device-hex>/syncthing                      the author's Syncthing device id and address
///
/// `<device-hex>` is the Arca device id (64 lowercase hex digits); only the agent of that
/// device writes under it. Writes are atomic (temporary file, fsync, rename; 0600 files,
/// 0700 directories); reads follow no symbolic link and are bounded.
public struct SyncFolder: Sendable {
    /// The folder's root directory.
    public let root: String
    /// The largest file read (a record is at most 1 MiB).
    public static let maximumFileSize = 1 << 20 + 4096

    /// The folder at `root`.
    public init(root: String) { self.root = root }

    /// A record's file name: the sequence number zero-padded to 20 digits, so names sort as numbers.
    public static func recordName(_ seq: UInt64) -> String {
        let digits = String(seq)
        return String(repeating: "0", count: 20 - digits.count) + digits + ".rec"
    }

    /// The sequence number of a record file name, or nil for any other name.
    public static func recordSeq(_ name: String) -> UInt64? {
        guard name.utf8.count == 24, name.hasSuffix(".rec") else { return nil }
        let digits = name.dropLast(4)
        guard digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return UInt64(digits)
    }

    /// Whether `name` is a device directory's name (64 lowercase hex digits).
    public static func isDeviceName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// The path of a file under `device`'s directory.
    public func path(_ device: String, _ parts: String...) -> String {
        ([root, device] + parts).joined(separator: "/")
    }

    /// Writes one of this device's files atomically (creating its directories).
    public func write(_ bytes: [UInt8], device: String, _ parts: String...) throws(SyncAgentError) {
        let all = [root, device] + parts
        let directory = all.dropLast().joined(separator: "/")
        let name = all.last ?? ""
        do {
            try FolderIO.makeDirectories(directory)
            // Syncthing skips its own temporary names when scanning: a half-written file never leaves.
            try FolderIO.writeAtomically(
                directory + "/" + name, temporary: directory + "/.syncthing.\(name).arca.tmp", bytes)
        } catch {
            throw .folder("cannot write \(directory)/\(name): \(error)")
        }
    }

    /// Writes record `seq` of `device`.
    public func writeRecord(_ bytes: [UInt8], device: String, seq: UInt64) throws(SyncAgentError) {
        try write(bytes, device: device, "records", Self.recordName(seq))
    }

    /// The device directories present (valid names only).
    public func devices() -> [String] {
        FolderIO.list(root).filter(Self.isDeviceName).sorted()
    }

    /// `device`'s record sequence numbers present, ascending.
    public func recordSeqs(_ device: String) -> [UInt64] {
        FolderIO.list(path(device, "records")).compactMap(Self.recordSeq).sorted()
    }

    /// The new-device names of `device`'s approvals.
    public func approvals(_ device: String) -> [String] {
        FolderIO.list(path(device, "approvals")).filter(Self.isDeviceName).sorted()
    }

    /// A file's bytes, or nil if missing, not a regular file, or too large.
    public func read(_ device: String, _ parts: String...) -> [UInt8]? {
        FolderIO.read(([root, device] + parts).joined(separator: "/"), limit: Self.maximumFileSize)
    }

    /// Creates the root (0700) if missing.
    public func create() throws(SyncAgentError) {
        do { try FolderIO.makeDirectories(root) } catch { throw .folder("cannot create \(root): \(error)") }
    }
}
