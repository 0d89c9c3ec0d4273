import ArcaClient
import ArcaCrypto
import ArcaKeyring
import ArcaProtocol
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The engine under ``Keychain`` and `ArcaSecurity`: the four item operations
/// on the caller's own vault, over a pooled arcad connection, with reads served
/// from the kernel keyring when they can be.
///
/// A read goes to the kernel only when the kernel key's description names
/// exactly the items the query can match: one item, by its full primary key,
/// asking for the secret alone. A kernel miss (locked class, item too large
/// for the kernel, absent) falls back to arcad, which tells "not found" from
/// "locked"; the kernel never answers either.
package struct ItemStore: Sendable {
    /// Where a secret came from (for the benchmark and the tests).
    package enum Source: Sendable, Equatable {
        /// The kernel keyring (two system calls).
        case kernel
        /// arcad, over the socket.
        case socket
    }

    /// The socket path; `nil` reads `ARCA_SOCKET` at each call.
    package var socketPath: String?
    /// Whether single-item reads try the kernel first.
    package var kernelReads: Bool

    /// A store; `socketPath` `nil` means `ARCA_SOCKET` or the default path.
    package init(socketPath: String? = nil, kernelReads: Bool = true) {
        self.socketPath = socketPath
        self.kernelReads = kernelReads
    }

    /// The system vault instead of the caller's own (``Keychain/system(service:)``).
    package var systemVault = false

    /// The caller's own vault (arcad authorizes by the peer's effective uid), or
    /// the system vault, where arcad serves only what is granted to the caller.
    package var vault: VaultID { systemVault ? .system : .user(uid: geteuid()) }

    /// The socket used when a store names none, before `ARCA_SOCKET`: lets the
    /// package's tests aim `SecItem…` at their own arcad without changing the
    /// process environment, which other code in the process may read.
    package static let defaultSocketOverride = Mutex<String?>(nil)

    private var pool: ConnectionPool {
        ConnectionPool.shared(
            path: socketPath ?? Self.defaultSocketOverride.withLock { $0 } ?? ArcadClient.environmentSocketPath)
    }

    /// `SecItemAdd`: the items asked for by `returnFlags` (empty when none).
    package func add(
        _ itemClass: ItemClass, attributes: AttributeMap, secret: [UInt8], returnFlags: ReturnFlags = []
    ) throws(KeychainError) -> [ResultItem] {
        let request = AddRequest(
            vault: vault, itemClass: itemClass, attributes: attributes, secret: secret, returnFlags: returnFlags)
        switch try pool.send(.add(request)) {
        case .items(let items): return items
        case .ok: return []
        case .error(let status, let message): throw KeychainError.from(status: status, message: message)
        case let other: throw KeychainError.unexpected(other)
        }
    }

    /// `SecItemCopyMatching` over the socket. No match throws ``KeychainError/Code/itemNotFound``.
    package func copyMatching(_ query: Query) throws(KeychainError) -> [ResultItem] {
        switch try pool.send(.copyMatching(vault: vault, query: query)) {
        case .items(let items):
            guard !items.isEmpty else { throw KeychainError(status: KeychainError.Code.itemNotFound.rawValue) }
            return items
        case .error(let status, let message): throw KeychainError.from(status: status, message: message)
        case let other: throw KeychainError.unexpected(other)
        }
    }

    /// `SecItemUpdate`.
    package func update(_ query: Query, attributes: AttributeMap, secret: [UInt8]?) throws(KeychainError) {
        try expectOK(.update(UpdateRequest(vault: vault, query: query, attributes: attributes, secret: secret)))
    }

    /// `SecItemDelete`: every match.
    package func delete(_ query: Query) throws(KeychainError) {
        try expectOK(.delete(vault: vault, query: query))
    }

    /// The secret of the one item a data-only query names: from the kernel
    /// when the query allows it and the kernel has it, else from arcad.
    /// `nil` when no item matches; a locked vault throws.
    package func secret(_ query: Query) throws(KeychainError) -> (data: Data, source: Source)? {
        if kernelReads, let data = Self.readKernel(query, persistent: systemVault) {
            return (data, .kernel)
        }
        do {
            guard let data = try copyMatching(query).first?.data else { return nil }
            return (Data(data), .socket)
        } catch  where error.code == .itemNotFound {
            return nil
        }
    }

    private func expectOK(_ request: Request) throws(KeychainError) {
        switch try pool.send(request) {
        case .ok, .items: return
        case .error(let status, let message): throw KeychainError.from(status: status, message: message)
        case let other: throw KeychainError.unexpected(other)
        }
    }

    // MARK: - The kernel path

    /// The kernel key a query names, when reading it answers the query exactly:
    /// the secret of one item, matched on primary-key attributes only.
    package static func kernelKey(for query: Query) -> KeyringItemKey? {
        guard asksForOneSecret(query) else { return nil }
        return KeyringItemKey.named(by: query.attributes, itemClass: query.itemClass)
    }

    /// Whether the query asks for the secret of one item and nothing else; which
    /// attributes the kernel can match is ``KeyringItemKey/named(by:itemClass:)``'s rule.
    private static func asksForOneSecret(_ query: Query) -> Bool {
        query.persistentRef == nil && query.matchLimit == .one && query.returnFlags == .data
            && !query.caseInsensitive && !query.synchronizableAny
    }

    /// The item's secret from the kernel, or `nil` on any miss (then ask arcad).
    ///
    /// The payload lands in a reused mlocked scratch buffer, zeroed after the
    /// copy: allocating guarded memory per read (mmap, mprotect, mlock and their
    /// undoing) would cost several times the two keyctl calls themselves.
    /// Reads `key` from the caller's keyrings, or with `persistent` from its
    /// persistent keyring only, where arcad places the system items granted to it.
    private static func readKernel(_ query: Query, persistent: Bool) -> Data? {
        guard asksForOneSecret(query), let buffer = KernelScratch.take() else { return nil }
        defer { KernelScratch.giveBack(buffer) }
        guard
            let length = KeyringReader().readItem(
                named: query.attributes, itemClass: query.itemClass, granted: persistent, into: buffer)
        else { return nil }
        return buffer.withUnsafeMutableBytes { raw in
            let payload = UnsafeMutableRawBufferPointer(rebasing: raw[0..<length])
            defer { payload.initializeMemory(as: UInt8.self, repeating: 0) }
            return Data(payload)
        }
    }
}

/// A few mlocked buffers of the kernel's maximum payload, reused by kernel reads.
private enum KernelScratch {
    /// The kernel's largest `user` key payload.
    static let size = 32_767
    static let idle = Mutex<[SecretBytes]>([])

    static func take() -> SecretBytes? {
        if let buffer = idle.withLock({ $0.popLast() }) { return buffer }
        return try? SecretBytes(count: size)
    }

    static func giveBack(_ buffer: SecretBytes) {
        idle.withLock { idle in
            if idle.count < 4 { idle.append(buffer) }
        }
    }
}
