import ArcaProtocol

/// The Arca client library. `Keychain` arrives with the Swift API issue.
public enum Arca {
    /// The library's release.
    public static var version: String { ArcaVersion.release }
}
