/// Where clients find arcad: the one spelling of the default socket path, which
/// arcad's configuration, the PAM module, the CLI and the library all start from.
public enum ArcadSocket {
    /// `/run/arca/arcad.sock` (ARCHITECTURE §2), unless `--socket`, `socket=` or
    /// `ARCA_SOCKET` says otherwise.
    public static let defaultPath = "/run/arca/arcad.sock"
}
