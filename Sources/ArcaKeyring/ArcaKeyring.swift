/// The kernel keyring layer. Its wrappers and Arca's keyring layout arrive with the
/// kernel-keyring issue; this file anchors the module in the package graph.
public enum ArcaKeyringModule {
    /// The module's name, for diagnostics.
    public static let name = "ArcaKeyring"
}
