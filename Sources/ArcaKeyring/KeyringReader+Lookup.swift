import ArcaCrypto
import ArcaProtocol

/// The kernel half of the kernel-first read that `arca get` and the library's
/// `SecItemCopyMatching` share: which lookups the kernel can answer, and the read.
/// Any miss is nil, never an error: the caller then asks arcad, which knows
/// whether the item is locked, absent or too large for the kernel.
extension KeyringReader {
    /// The secret of the one item `lookup` names (see ``KeyringItemKey/named(by:itemClass:)``),
    /// in new secure storage; from the caller's persistent keyring only when `granted`
    /// (system items arcad granted to the caller), else from its own keyrings.
    public func readItem(named lookup: AttributeMap, itemClass: ItemClass, granted: Bool = false) -> SecretBytes? {
        guard let key = KeyringItemKey.named(by: lookup, itemClass: itemClass) else { return nil }
        return try? granted ? readGranted(key) : read(key)
    }

    /// ``readItem(named:itemClass:granted:)`` into `buffer`, without allocating;
    /// the payload length, nil on a miss or when the payload did not fit.
    public func readItem(
        named lookup: AttributeMap, itemClass: ItemClass, granted: Bool = false, into buffer: SecretBytes
    ) -> Int? {
        guard let key = KeyringItemKey.named(by: lookup, itemClass: itemClass),
            let length = try? granted ? readGranted(key, into: buffer) : read(key, into: buffer),
            length <= buffer.count
        else { return nil }
        return length
    }
}
