import ArcaKeyring

/// Where arcad puts the items of unlocked classes: the kernel keyring in
/// production, an in-memory twin in unit tests (so the request logic is tested
/// without root).
public protocol KernelPublishing: Sendable {
    /// Replaces the user's ring of `class` with `items`; returns how many could not be loaded.
    func install(uid: UInt32, class kernelClass: KernelClass, items: [KeyringItem]) -> Int
    /// Invalidates every key of the user's ring of `class`.
    func remove(uid: UInt32, class kernelClass: KernelClass)
}

/// The real kernel keyring, through `KeyringLayout`.
public struct KernelKeyring: KernelPublishing {
    private let layout = KeyringLayout()

    public init() {}

    public func install(uid: UInt32, class kernelClass: KernelClass, items: [KeyringItem]) -> Int {
        do {
            let report = try layout.install(user: uid, class: Self.ring(kernelClass), items: items)
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
        do {
            _ = try layout.remove(user: uid, class: Self.ring(kernelClass))
        } catch {
            Log.error("uid \(uid): cannot remove the \(kernelClass.rawValue) ring: \(error)")
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
