import ArcaProtocol

/// The core daemon's library: request handling, sessions and lock state arrive
/// with the arcad issue.
public enum ArcaDaemon {
    /// `arcad --version` output.
    public static var versionLine: String { "arcad \(ArcaVersion.release)" }
}
