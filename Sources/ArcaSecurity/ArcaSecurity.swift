import Arca

/// The SecItem-compatible API arrives with the Swift API issue.
public enum ArcaSecurityModule {
    /// The module's release.
    public static var version: String { Arca.version }
}
