/// The Secret Service's login collection as the vault keeps it: its label. Not a
/// secret (like a gnome-keyring keyring's name): stored in the header in clear,
/// readable with the vault locked.
extension Vault {
    /// The label of a collection never renamed.
    public static let defaultCollectionLabel = "Login"

    /// The login collection's label.
    public func collectionLabel() throws -> String {
        try guarded {
            guard let stored = try header("secret_service.label") else { return Self.defaultCollectionLabel }
            return String(decoding: stored, as: UTF8.self)
        }
    }

    /// Renames the login collection (kept across restarts). At most 16 KiB of UTF-8.
    public func setCollectionLabel(_ label: String) throws {
        guard label.utf8.count <= Self.maximumAttributeLength else {
            throw VaultError.param("a collection label is at most 16 KiB")
        }
        try guarded { try putHeader("secret_service.label", .blob(Array(label.utf8))) }
    }
}
