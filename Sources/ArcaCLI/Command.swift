import ArcaKeyring
import ArcaProtocol

/// Where a secret or password comes from.
public enum SecretSource: Sendable, Equatable {
    /// stdin when it is not a terminal (one line for passwords, everything for
    /// item secrets), else a no-echo prompt. The default, and the safe one.
    case standardInput
    /// A value that was on the command line (the `security` verbs' `-w`/`-p`):
    /// accepted with a warning on stderr, since any user can read argv.
    case commandLine(String)
}

/// The item an item verb acts on, split as `SecItemUpdate` needs it.
public struct ItemSelection: Sendable, Equatable {
    /// The class (`--internet` or not).
    public var itemClass: ItemClass
    /// The primary-key attributes given (service, account, group, server…).
    public var keyAttributes: AttributeMap
    /// The descriptive attributes given (label, description, comment, accessible).
    public var otherAttributes: AttributeMap

    /// Every attribute given, for add and for matching.
    public var allAttributes: AttributeMap { keyAttributes.merging(otherAttributes) { first, _ in first } }

    /// The kernel key of the item, when the selection names exactly one primary key
    /// (service or server, and account); nil otherwise (then only arcad can answer).
    public var keyringKey: KeyringItemKey? {
        guard case .string(let account)? = keyAttributes[.account] else { return nil }
        let group = string(.accessGroup)
        let sync = keyAttributes[.synchronizable] == .bool(true)
        switch itemClass {
        case .genericPassword:
            guard case .string(let service)? = keyAttributes[.service] else { return nil }
            return .genericPassword(
                GenericPasswordKey(service: service, account: account, accessGroup: group, synchronizable: sync))
        case .internetPassword:
            guard case .string(let server)? = keyAttributes[.server] else { return nil }
            var port = 0
            if case .uint32(let value)? = keyAttributes[.port] { port = Int(value) }
            return .internetPassword(
                InternetPasswordKey(
                    server: server, account: account, protocol: string(.protocol), port: port, path: string(.path),
                    securityDomain: string(.securityDomain), authenticationType: string(.authenticationType),
                    accessGroup: group, synchronizable: sync))
        }
    }

    private func string(_ tag: AttributeTag) -> String {
        if case .string(let value)? = keyAttributes[tag] { return value }
        return ""
    }
}

/// A validated command, ready to run. Validation happens entirely before execution.
public enum Command: Sendable, Equatable {
    /// `help [verb]`, `--help`.
    case help(verb: String?)
    /// `version`.
    case version(json: Bool)
    /// `init`.
    case initVault(showRecoveryKey: Bool)
    /// `add`, `add-*-password`.
    case add(ItemSelection, secret: SecretSource, replaceExisting: Bool, compatibility: Bool)
    /// `get`.
    case get(ItemSelection, useKernel: Bool, json: Bool)
    /// `find`, `list`.
    case find(ItemSelection?, showSecrets: Bool, json: Bool)
    /// `update`.
    case update(ItemSelection, secret: SecretSource?)
    /// `delete`, `delete-*-password`.
    case delete(ItemSelection, compatibility: Bool)
    /// `clear`.
    case clear
    /// `lock`, `lock-keychain`.
    case lock(all: Bool)
    /// `unlock`, `unlock-keychain`.
    case unlock(SecretSource)
    /// `status`.
    case status(json: Bool, user: UInt32?)
    /// `passwd`.
    case passwd(resync: Bool, recover: Bool)
    /// `recovery`.
    case recovery(rotate: Bool, json: Bool)
    /// `show`.
    case show(json: Bool)
    /// `find-*-password`: attributes as `security` prints them, or only the password (`-w`),
    /// or also the password on stderr (`-g`).
    case compatibilityFind(ItemSelection, passwordOnly: Bool, passwordOnStderr: Bool)
    /// `add --system`: add a system item (root only), then grant it to `grants`.
    case systemAdd(ItemSelection, grants: [Principal], replaceExisting: Bool)
    /// `get --system`: the caller's persistent keyring first, then arcad.
    case systemGet(ItemSelection, useKernel: Bool, json: Bool)
    /// `delete --system`.
    case systemDelete(ItemSelection)
    /// `grant` (`revoke: false`) and `revoke`; revoking no principal revokes them all.
    case grant(ItemSelection, principals: [Principal], revoke: Bool)
    /// `grants`.
    case grants(json: Bool)
    /// `export --to FILE [--passphrase]`.
    case exportBackup(path: String, passphrase: Bool)
    /// `import --from FILE`.
    case importBackup(path: String)
}
