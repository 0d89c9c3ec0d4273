/// Errors of the sync layer. None carries secret material; each names what was refused
/// so that `arca sync status` can report it.
public enum SyncError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes are not a record or head of this format (truncated, bad magic, bad lengths).
    case malformed(String)
    /// The author is not a member of the circle.
    case unknownDevice(DeviceID)
    /// The author was removed from the circle and this record comes after its cut-off.
    case removedDevice(DeviceID, seq: UInt64)
    /// The signature does not verify: the record or head was forged or altered.
    case forged(DeviceID)
    /// A second, different record for an author's sequence number that was already applied.
    case equivocation(DeviceID, seq: UInt64)
    /// The record's previous-hash does not match the author's log as applied here.
    case chainBroken(DeviceID, seq: UInt64)
    /// A head that goes backwards (a restored old head): `seen` was applied or announced before.
    case rollback(DeviceID, seen: UInt64, got: UInt64)
    /// A head at the applied sequence number whose chain hash differs from the log applied here.
    case forkedHead(DeviceID, seq: UInt64)
    /// The record was sealed under an epoch key this device does not hold.
    case unknownEpoch(UInt32)
    /// The body did not open under the epoch key (altered ciphertext or header).
    case undecryptable(DeviceID, seq: UInt64)
    /// No such item or version.
    case notFound
    /// A backup file could not be opened: wrong recovery key or passphrase, or altered bytes.
    case backupUnreadable

    public var description: String {
        switch self {
        case .malformed(let why): "malformed sync data: \(why)"
        case .unknownDevice(let d): "record from unknown device \(d.short)"
        case .removedDevice(let d, let seq): "record \(seq) from removed device \(d.short) refused"
        case .forged(let d): "bad signature on data claiming device \(d.short): forged or altered"
        case .equivocation(let d, let seq): "device \(d.short) sent two different records numbered \(seq)"
        case .chainBroken(let d, let seq): "record \(seq) of device \(d.short) does not follow its log"
        case .rollback(let d, let seen, let got): "device \(d.short) head rolled back from \(seen) to \(got)"
        case .forkedHead(let d, let seq): "head \(seq) of device \(d.short) does not match its log"
        case .unknownEpoch(let e): "record sealed under unknown key epoch \(e)"
        case .undecryptable(let d, let seq): "record \(seq) of device \(d.short) does not open: altered"
        case .notFound: "no such item or version"
        case .backupUnreadable: "backup does not open: wrong key or passphrase, or the file was altered"
        }
    }
}
