/// One line of `/proc/key-users`: what a uid's keys cost and its quota.
///
///     <uid>: <usage> <nkeys>/<nikeys> <qnkeys>/<maxkeys> <qnbytes>/<maxbytes>
public struct KeyQuota: Equatable, Sendable {
    /// The uid whose keys are charged.
    public var uid: UInt32
    /// Keys owned (including those not charged to the quota).
    public var keys: Int
    /// Keys counted against the quota.
    public var quotaKeys: Int
    /// The key-count limit.
    public var maximumKeys: Int
    /// Bytes counted against the quota (descriptions, payloads, 4 bytes per keyring link).
    public var quotaBytes: Int
    /// The byte limit.
    public var maximumBytes: Int

    /// Keys that can still be created.
    public var headroomKeys: Int { max(0, maximumKeys - quotaKeys) }
    /// Bytes that can still be charged.
    public var headroomBytes: Int { max(0, maximumBytes - quotaBytes) }

    /// Parses one line; nil if it is not a `/proc/key-users` line.
    public init?(line: Substring) {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard words.count == 5, words[0].hasSuffix(":"), let uid = UInt32(words[0].dropLast()) else { return nil }
        func pair(_ word: Substring) -> (Int, Int)? {
            let halves = word.split(separator: "/")
            guard halves.count == 2, let a = Int(halves[0]), let b = Int(halves[1]) else { return nil }
            return (a, b)
        }
        guard let counts = pair(words[2]), let keys = pair(words[3]), let bytes = pair(words[4]) else { return nil }
        self.uid = uid
        self.keys = counts.0
        self.quotaKeys = keys.0
        self.maximumKeys = keys.1
        self.quotaBytes = bytes.0
        self.maximumBytes = bytes.1
    }

    /// Parses the whole file's text.
    public static func parse(_ text: String) -> [KeyQuota] {
        text.split(separator: "\n").compactMap { KeyQuota(line: $0) }
    }

    /// The current line for `uid`, or nil if the uid owns no keys.
    public static func current(uid: UInt32) throws(KeyringError) -> KeyQuota? {
        let path = "/proc/key-users"
        guard let text = ProcFile.read(path) else { throw KeyringError.procfs(path: path) }
        return parse(text).first { $0.uid == uid }
    }

    /// Root's current usage: Arca's item keys are owned by root and charged here.
    /// arcad asks before every ring it builds and every key it adds, so only root's line
    /// is read, in one small read: the kernel lists uids in ascending order, root first,
    /// and formats a whole page (one line per uid, thousands on a busy machine) for each
    /// read that asks for one, which made this the largest part of a login's work in arcad.
    public static func root() throws(KeyringError) -> KeyQuota {
        let path = "/proc/key-users"
        if let head = ProcFile.read(path, limit: rootLineLimit), head.contains("\n"),
            let line = head.split(separator: "\n").first.flatMap({ KeyQuota(line: $0) }), line.uid == 0
        {
            return line
        }
        guard let line = try current(uid: 0) else { throw KeyringError.procfs(path: path) }
        return line
    }

    /// Enough for root's line at the widest the kernel prints it ("%5u: %5d %d/%d %d/%d
    /// %d/%d" with 32-bit values: under 100 bytes).
    static let rootLineLimit = 128

    /// `/proc/sys/kernel/keys/persistent_keyring_expiry`, in seconds.
    public static func persistentKeyringExpiry() throws(KeyringError) -> Int {
        let path = "/proc/sys/kernel/keys/persistent_keyring_expiry"
        guard let text = ProcFile.read(path), let seconds = Int(text.filter { !$0.isWhitespace }) else {
            throw KeyringError.procfs(path: path)
        }
        return seconds
    }
}
