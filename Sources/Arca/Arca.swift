import ArcaProtocol

/// The Arca client library: ``Keychain`` for Swift programs on Linux.
public enum Arca {
    /// The library's release.
    public static var version: String { ArcaVersion.release }
}

/// A result code of the Keychain API, with Apple's numbers (`0` is success).
/// Defined here so that ``KeychainError/status`` and `ArcaSecurity`'s
/// `SecItem…` functions share one type, as `Security.OSStatus` does on Apple platforms.
public typealias OSStatus = Int32
