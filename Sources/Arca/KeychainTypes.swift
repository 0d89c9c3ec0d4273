import ArcaProtocol

/// When an item is readable (`kSecAttrAccessible`), with its Linux meaning.
public enum Accessibility: String, Sendable, CaseIterable, Hashable {
    /// While the user has an unlocked session (the default, as on Apple platforms).
    case whenUnlocked
    /// From the first unlock after boot until reboot (survives screen lock and logout).
    case afterFirstUnlock
    /// As ``whenUnlocked``; never leaves this machine.
    case whenUnlockedThisDeviceOnly
    /// As ``afterFirstUnlock``; never leaves this machine.
    case afterFirstUnlockThisDeviceOnly
    /// As ``whenUnlocked``, only in a vault protected by a password; never leaves this machine.
    case whenPasscodeSetThisDeviceOnly

    /// The wire value.
    package var wire: ArcaProtocol.Accessibility {
        switch self {
        case .whenUnlocked: .whenUnlocked
        case .afterFirstUnlock: .afterFirstUnlock
        case .whenUnlockedThisDeviceOnly: .whenUnlockedThisDeviceOnly
        case .afterFirstUnlockThisDeviceOnly: .afterFirstUnlockThisDeviceOnly
        case .whenPasscodeSetThisDeviceOnly: .whenPasscodeSetThisDeviceOnly
        }
    }

    /// From the wire value.
    package init(_ wire: ArcaProtocol.Accessibility) {
        switch wire {
        case .whenUnlocked: self = .whenUnlocked
        case .afterFirstUnlock: self = .afterFirstUnlock
        case .whenUnlockedThisDeviceOnly: self = .whenUnlockedThisDeviceOnly
        case .afterFirstUnlockThisDeviceOnly: self = .afterFirstUnlockThisDeviceOnly
        case .whenPasscodeSetThisDeviceOnly: self = .whenPasscodeSetThisDeviceOnly
        }
    }
}

/// The protocol of an internet password (`kSecAttrProtocol`); raw values are
/// Apple's four-character codes.
public enum ProtocolType: String, Sendable, CaseIterable, Hashable {
    /// `kSecAttrProtocolHTTPS`.
    case https = "htps"
    /// `kSecAttrProtocolHTTP`.
    case http = "http"
    /// `kSecAttrProtocolFTP`.
    case ftp = "ftp "
    /// `kSecAttrProtocolSSH`.
    case ssh = "ssh "
    /// `kSecAttrProtocolSMTP`.
    case smtp = "smtp"
    /// `kSecAttrProtocolIMAP`.
    case imap = "imap"
    /// `kSecAttrProtocolIMAPS`.
    case imaps = "imps"
    /// `kSecAttrProtocolLDAP`.
    case ldap = "ldap"
}

/// How an internet password authenticates (`kSecAttrAuthenticationType`);
/// raw values are Apple's four-character codes.
public enum AuthenticationType: String, Sendable, CaseIterable, Hashable {
    /// `kSecAttrAuthenticationTypeDefault`.
    case `default` = "dflt"
    /// `kSecAttrAuthenticationTypeHTMLForm`.
    case htmlForm = "form"
    /// `kSecAttrAuthenticationTypeHTTPBasic`.
    case httpBasic = "http"
    /// `kSecAttrAuthenticationTypeHTTPDigest`.
    case httpDigest = "httd"
    /// `kSecAttrAuthenticationTypeNTLM`.
    case ntlm = "ntlm"
}
