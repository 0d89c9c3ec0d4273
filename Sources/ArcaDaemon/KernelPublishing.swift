import ArcaCrypto
import ArcaKeyring
import Synchronization

/// Where arcad puts the items of unlocked classes, and parks the class keys it
/// holds across a restart: the kernel keyring in production, an in-memory twin in
/// unit tests (so the request logic is tested without root).
public protocol KernelPublishing: Sendable {
    /// Replaces the user's ring of `class` with `items`; returns how many could not be
    /// loaded. When the new ring cannot be placed, the old one is destroyed anyway and
    /// every item counts as not loaded (served from the socket): a kernel never keeps
    /// a ring that no longer matches the vault.
    func install(uid: UInt32, class kernelClass: KernelClass, items: [KeyringItem]) -> InstallResult
    /// Invalidates every key of the user's ring of `class`; false if some key could
    /// not be destroyed (the caller reports the lock as failed).
    func remove(uid: UInt32, class kernelClass: KernelClass) -> Bool
    /// Adds or replaces one item in an installed ring; false if the caller must
    /// reinstall the ring instead (no ring known, or it changed under us), or if the
    /// item cannot live in the kernel (`loadable` tells which).
    func put(uid: UInt32, class kernelClass: KernelClass, item: KeyringItem) -> PutOutcome
    /// Removes one item's key (by its description) from an installed ring, leaving the
    /// rest of the ring as it is.
    func drop(uid: UInt32, class kernelClass: KernelClass, key: KeyringItemKey) -> DropOutcome
    /// Whether the installed ring holds a key for `key`; nil when no ring is known.
    func holds(uid: UInt32, class kernelClass: KernelClass, key: KeyringItemKey) -> Bool?
    /// Clears everything of a deleted account: both rings, service grants, `@u`.
    func purge(uid: UInt32)
    /// Replaces the system items granted to `uid` (its persistent keyring's `arca:svc`
    /// ring) by `items`; returns how many could not be loaded.
    func grantService(uid: UInt32, items: [KeyringItem]) -> Int
    /// Invalidates everything granted to `uid`.
    func revokeService(uid: UInt32)
    /// Restarts the expiry timer of `uid`'s persistent keyring.
    func refreshService(uid: UInt32)
    /// Parks the class keys held for `uid` where the next arcad over the same state
    /// finds them, or removes what is parked when `keys` is nil.
    func park(uid: UInt32, keys: SecretBytes?)
    /// Every uid an earlier arcad over the same state parked, with its keys.
    func parkedKeys() -> [(uid: UInt32, keys: SecretBytes)]
}

extension KernelPublishing {
    /// Twins written before system services ignore grants.
    public func grantService(uid: UInt32, items: [KeyringItem]) -> Int { 0 }
    /// Twins written before system services ignore grants.
    public func revokeService(uid: UInt32) {}
    /// Twins written before system services ignore grants.
    public func refreshService(uid: UInt32) {}
}

/// The result of replacing a ring.
public struct InstallResult: Equatable, Sendable {
    /// Items served from the socket only (too large, over budget, or all of them
    /// when the ring could not be placed).
    public var notLoaded: Int
    /// Keys of the old ring that could not be destroyed: the caller must not report
    /// success for a write whose old secret may still be in the kernel.
    public var oldKeysRemain = false

    public init(notLoaded: Int, oldKeysRemain: Bool = false) {
        self.notLoaded = notLoaded
        self.oldKeysRemain = oldKeysRemain
    }
}

/// The result of putting one item into a ring.
public enum PutOutcome: Equatable, Sendable {
    /// The item is in the kernel.
    case placed
    /// The item stays socket-only (too large, over budget): counted, not retried.
    case notLoadable
    /// The ring must be rebuilt with `install`.
    case reinstall
}

/// The result of dropping one item's key from a ring.
public enum DropOutcome: Equatable, Sendable {
    /// The key was in the ring and is destroyed.
    case dropped
    /// The ring holds no key for the item: it was served from the socket only.
    case absent
    /// The ring must be rebuilt with `install` (no ring known: an earlier arcad's
    /// keys can only be found and retired by it).
    case reinstall
    /// The key could not be destroyed: the old secret may still be in the kernel.
    case failed
}

/// The real kernel keyring, through `KeyringLayout`, which keeps the serial of
/// every ring and key it made.
public final class KernelKeyring: KernelPublishing, Sendable {
    private let layout: KeyringLayout
    private let parking: KeyParking?

    /// Places items within `budget` (arca.conf's `kernel_*` keys), and parks held keys
    /// in root's keyring under a name derived from `stateDirectory` (none: no parking).
    /// `anchorIn`: where the layout keeps its hold on users' `@u` (arcad: its private
    /// session keyring; `KeyringLayout.init(budget:anchorIn:)`).
    public init(budget: KernelBudget = KernelBudget(), stateDirectory: String? = nil, anchorIn: KeySerial? = nil) {
        layout = KeyringLayout(budget: budget, anchorIn: anchorIn)
        parking = stateDirectory.map { KeyParking(stateDirectory: $0) }
    }

    public func park(uid: UInt32, keys: SecretBytes?) { parking?.park(uid: uid, keys: keys) }

    public func parkedKeys() -> [(uid: UInt32, keys: SecretBytes)] { parking?.restore() ?? [] }

    public func put(uid: UInt32, class kernelClass: KernelClass, item: KeyringItem) -> PutOutcome {
        do {
            switch try layout.put(item: item, user: uid, class: Self.ring(kernelClass)) {
            case .placed: return .placed
            case .notLoaded(let reason):
                Log.notice("uid \(uid): an item stays socket-only (\(reason)); \(item.key.kindName)")
                return .notLoadable
            case .noRing: return .reinstall
            }
        } catch {
            Log.debug("uid \(uid): cannot add to the \(kernelClass.rawValue) ring (\(error)); rebuilding it")
            return .reinstall
        }
    }

    public func drop(uid: UInt32, class kernelClass: KernelClass, key: KeyringItemKey) -> DropOutcome {
        do {
            switch try layout.drop(key, user: uid, class: Self.ring(kernelClass)) {
            case .dropped: return .dropped
            case .absent: return .absent
            case .noRing: return .reinstall
            }
        } catch {
            Log.error("uid \(uid): cannot destroy a \(key.kindName) key of the \(kernelClass.rawValue) ring: \(error)")
            return .failed
        }
    }

    public func holds(uid: UInt32, class kernelClass: KernelClass, key: KeyringItemKey) -> Bool? {
        layout.holds(key, user: uid, class: Self.ring(kernelClass))
    }

    public func install(uid: UInt32, class kernelClass: KernelClass, items: [KeyringItem]) -> InstallResult {
        do {
            let report = try layout.install(user: uid, class: Self.ring(kernelClass), items: items)
            for (key, reason) in report.notLoaded.prefix(3) {
                Log.notice("uid \(uid): an item stays socket-only (\(reason)); \(key.kindName)")
            }
            return InstallResult(notLoaded: report.notLoaded.count)
        } catch KeyringError.notDestroyed(let remaining) {
            Log.error("uid \(uid): cannot replace the \(kernelClass.rawValue) ring: \(remaining) old keys survive")
            return InstallResult(notLoaded: items.count, oldKeysRemain: true)
        } catch {
            Log.error(
                "uid \(uid): cannot install the \(kernelClass.rawValue) ring (\(error)); "
                    + "the old ring is gone and the class is served from the socket")
            return InstallResult(notLoaded: items.count)
        }
    }

    public func remove(uid: UInt32, class kernelClass: KernelClass) -> Bool {
        do {
            _ = try layout.remove(user: uid, class: Self.ring(kernelClass))
            return true
        } catch {
            Log.error("uid \(uid): lock incomplete: cannot destroy the \(kernelClass.rawValue) keys: \(error)")
            return false
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
        let report = layout.purge(user: uid)
        var done = "\(report.destroyed) kernel keys destroyed"
        if report.userKeyringReset {
            done += ", @u cleared"
            if let changed = report.changedPermissions {
                done += " and its permissions put back from 0x\(String(changed, radix: 16)) to the default"
            }
        }
        if report.persistentKeyringCleared { done += ", persistent keyring cleared" }
        if report.isComplete {
            Log.notice("uid \(uid): the account is gone: \(done) (vault kept)")
        } else {
            let failures = report.failures + (report.notDestroyed > 0 ? ["\(report.notDestroyed) keys survive"] : [])
            Log.error(
                "uid \(uid): the account is gone; purge incomplete (\(failures.joined(separator: "; "))); "
                    + "done: \(done); a new account with this uid may inherit what is left")
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
