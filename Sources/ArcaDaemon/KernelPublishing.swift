import ArcaKeyring
import Synchronization

/// Where arcad puts the items of unlocked classes: the kernel keyring in
/// production, an in-memory twin in unit tests (so the request logic is tested
/// without root).
public protocol KernelPublishing: Sendable {
    /// Replaces the user's ring of `class` with `items`; returns how many could not be loaded.
    func install(uid: UInt32, class kernelClass: KernelClass, items: [KeyringItem]) -> Int
    /// Invalidates every key of the user's ring of `class`.
    func remove(uid: UInt32, class kernelClass: KernelClass)
    /// Adds or replaces one item in an installed ring; false if the caller must
    /// reinstall the ring instead (no ring known, or it changed under us), or if the
    /// item cannot live in the kernel (`loadable` tells which).
    func put(uid: UInt32, class kernelClass: KernelClass, item: KeyringItem) -> PutOutcome
    /// Clears everything of a deleted account: both rings, service grants, `@u`.
    func purge(uid: UInt32)
    /// Replaces the system items granted to `uid` (its persistent keyring's `arca:svc`
    /// ring) by `items`; returns how many could not be loaded.
    func grantService(uid: UInt32, items: [KeyringItem]) -> Int
    /// Invalidates everything granted to `uid`.
    func revokeService(uid: UInt32)
    /// Restarts the expiry timer of `uid`'s persistent keyring.
    func refreshService(uid: UInt32)
}

extension KernelPublishing {
    /// Twins written before system services ignore grants.
    public func grantService(uid: UInt32, items: [KeyringItem]) -> Int { 0 }
    /// Twins written before system services ignore grants.
    public func revokeService(uid: UInt32) {}
    /// Twins written before system services ignore grants.
    public func refreshService(uid: UInt32) {}
}

/// The result of putting one item into a ring.
public enum PutOutcome: Equatable, Sendable {
    /// The item is in the kernel.
    case placed
    /// The item stays socket-only (too large, quota): counted, not retried.
    case notLoadable
    /// The ring must be rebuilt with `install`.
    case reinstall
}

/// The real kernel keyring, through `KeyringLayout`.
public final class KernelKeyring: KernelPublishing, Sendable {
    private let layout = KeyringLayout()
    /// Serials of the rings arcad installed, so that one write touches one key.
    private let rings = Mutex<[String: KeySerial]>([:])

    public init() {}

    private static func slot(_ uid: UInt32, _ c: KernelClass) -> String { "\(uid)/\(c.rawValue)" }

    public func put(uid: UInt32, class kernelClass: KernelClass, item: KeyringItem) -> PutOutcome {
        guard let ring = rings.withLock({ $0[Self.slot(uid, kernelClass)] }) else { return .reinstall }
        do {
            return try layout.put(item: item, into: ring) == nil ? .placed : .notLoadable
        } catch {
            Log.debug("uid \(uid): cannot add to ring \(ring) (\(error)); rebuilding it")
            return .reinstall
        }
    }

    public func install(uid: UInt32, class kernelClass: KernelClass, items: [KeyringItem]) -> Int {
        do {
            let report = try layout.install(user: uid, class: Self.ring(kernelClass), items: items)
            rings.withLock { $0[Self.slot(uid, kernelClass)] = report.ring }
            for (key, reason) in report.notLoaded.prefix(3) {
                Log.notice("uid \(uid): an item stays socket-only (\(reason)); \(key.kindName)")
            }
            return report.notLoaded.count
        } catch {
            Log.error("uid \(uid): cannot install the \(kernelClass.rawValue) ring: \(error)")
            return items.count
        }
    }

    public func remove(uid: UInt32, class kernelClass: KernelClass) {
        rings.withLock { $0[Self.slot(uid, kernelClass)] = nil }
        do {
            _ = try layout.remove(user: uid, class: Self.ring(kernelClass))
        } catch {
            Log.error("uid \(uid): cannot remove the \(kernelClass.rawValue) ring: \(error)")
        }
    }

    public func grantService(uid: UInt32, items: [KeyringItem]) -> Int {
        do {
            let report = try layout.grant(uid: uid, items: items)
            for (key, reason) in report.notLoaded.prefix(3) {
                Log.notice("uid \(uid): a granted item stays socket-only (\(reason)); \(key.kindName)")
            }
            return report.notLoaded.count
        } catch {
            Log.error("uid \(uid): cannot place the arca:svc ring: \(error)")
            return items.count
        }
    }

    public func revokeService(uid: UInt32) {
        do {
            _ = try layout.revoke(uid: uid)
        } catch {
            Log.error("uid \(uid): cannot revoke the arca:svc ring: \(error)")
        }
    }

    public func refreshService(uid: UInt32) {
        do {
            try layout.refresh(uid: uid)
        } catch {
            Log.error("uid \(uid): cannot refresh the persistent keyring: \(error)")
        }
    }

    public func purge(uid: UInt32) {
        rings.withLock { rings in
            for c in KernelClass.allCases { rings[Self.slot(uid, c)] = nil }
        }
        do {
            try layout.purge(user: uid)
        } catch {
            Log.error("uid \(uid): cannot clear the keyrings of a deleted account: \(error)")
        }
    }

    static func ring(_ c: KernelClass) -> KeyringClass {
        switch c {
        case .whenUnlocked: .whenUnlocked
        case .afterFirstUnlock: .afterFirstUnlock
        }
    }
}

extension KeyringItemKey {
    var kindName: String {
        switch self {
        case .genericPassword: "generic password"
        case .internetPassword: "internet password"
        }
    }
}
