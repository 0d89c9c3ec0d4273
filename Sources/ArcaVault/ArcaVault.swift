/// The encrypted SQLite vault. The item model and store arrive with the vault
/// issue; this file anchors the module in the package graph.
public enum ArcaVaultModule {
    /// The module's name, for diagnostics.
    public static let name = "ArcaVault"
}
