import ArcaProtocol

/// The core daemon's library.
public enum ArcaDaemon {
    /// `arcad --version` output.
    public static var versionLine: String { "arcad \(ArcaVersion.release)" }
}
