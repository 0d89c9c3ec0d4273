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
    /// (service or server, and account); nil otherwise. (`get` reads the kernel only
    /// when nothing but the primary key is given: see `KeyringReader.readItem`.)
    public var keyringKey: KeyringItemKey? { KeyringItemKey.named(by: keyAttributes, itemClass: itemClass) }
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
    /// A verb whose run function comes with it (see ``VerbAction``).
    case action(VerbAction)
}

/// The command of a verb that brings its own run function, so that a verb added in
/// its own file is one row there (and its name in ``CommandTable/verbs``), with no
/// case in ``Command`` and no line in the executor: its handler returns
/// `.action(VerbAction(verb: …, arguments: […]) { context, output in … })`.
public struct VerbAction: Sendable, Equatable {
    /// The verb.
    public let verb: String
    /// The validated arguments, spelled out for tests and equality; never a secret.
    public let arguments: [String]
    let run: @Sendable (inout Context, inout Output) throws(CLIError) -> Void

    init(
        verb: String, arguments: [String] = [],
        run: @escaping @Sendable (inout Context, inout Output) throws(CLIError) -> Void
    ) {
        self.verb = verb
        self.arguments = arguments
        self.run = run
    }

    /// Same verb and arguments.
    public static func == (lhs: VerbAction, rhs: VerbAction) -> Bool {
        lhs.verb == rhs.verb && lhs.arguments == rhs.arguments
    }
}
