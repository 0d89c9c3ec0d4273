import ArcaCrypto
import ArcaProtocol
import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A transfer session (`OpenSession`): owned by the client that opened it.
struct TransferSession {
    let owner: String
    /// nil: the `plain` algorithm.
    let cipher: SessionCipher?
}

/// An item of the in-memory `session` collection (gone when arca-secretd exits).
struct MemoryItem {
    var label: String
    var attributes: [String: String]
    var secret: SecretBytes
    var contentType: String
    let created: UInt64
    var modified: UInt64
}

/// A pending prompt: only its owner may run or dismiss it.
struct PendingPrompt {
    let owner: String
    /// The objects to unlock (empty: nothing to do but complete).
    let unlock: [String]
}

/// The freedesktop Secret Service over arcad: every object, method, property and
/// signal of the spec (0.2), served from one bus thread. Login items live in the
/// user's vault; session items in memory.
public final class SecretService {
    let bus: BusConnection
    let arcad: ArcadLink
    let wake: WakeSignal
    let listener: EventListener
    var sessions: [String: TransferSession] = [:]
    var prompts: [String: PendingPrompt] = [:]
    var memoryItems: [String: MemoryItem] = [:]
    /// Login CreateItem calls of the current round of bus messages (`flushCreates`).
    var pendingCreates: [PendingCreate] = []
    /// Login GetSecret calls of the current round of bus messages (`flushSecretReads`).
    var pendingSecretReads: [PendingSecretRead] = []
    /// Connections for CreateItem calls sent to arcad at once.
    let creators: ArcadLinkPool
    var nextNumber = 1
    let started = UInt64(time(nil))
    /// The vault's lock classes as last seen, for PropertiesChanged(Locked).
    var unlocked: LockClasses = []
    /// Login items seen unlocked (never secrets); emptied on any lock change, and
    /// per item on change or delete.
    var cache = ItemCache(limit: SecretService.cacheLimit)
    /// Login items of the last search not yet in `cache`: the first property read of
    /// one of them fetches them all in one request (libsecret reads every item a
    /// search returned, one D-Bus call each).
    var uncachedFound: Set<String> = []
    /// The login collection's label and the class of new items, from arcad.
    var settings = CollectionSettings(label: "Login", accessible: .afterFirstUnlock)
    /// The next DH key pair, made while idle so that OpenSession does one exponentiation.
    var spareKey: DHKeyPair?
    /// Unlock prompts being shown by the system prompter, by callback path.
    var flows: [String: PromptFlow] = [:]
    let promptChecks = PromptChecks()
    /// Set by a request over many items: the loop trims the heap once idle.
    var trimHeap = false
    /// Bus messages handled since the heap was last trimmed.
    var messagesSinceTrim = 0
    let verbose: Bool

    /// At most this many login items' metadata stay cached (the rest is re-read).
    static let cacheLimit = 2048
    /// How long the bus stays quiet before the next DH key pair is made.
    static let quietBeforeSpareKeyMilliseconds: Int32 = 50
    /// After this many bus messages the heap is trimmed once the bus is drained.
    static let messagesPerTrim = 1000

    /// The well-known name of the Secret Service.
    public static let busName = "org.freedesktop.secrets"

    /// Connects to the session bus and to arcad (as `uid`, at `socketPath`).
    public init(uid: UInt32, socketPath: String, verbose: Bool) throws {
        bus = try BusConnection.openSession()
        arcad = ArcadLink(uid: uid, socketPath: socketPath)
        wake = try WakeSignal()
        listener = EventListener(uid: uid, socketPath: socketPath, wake: wake)
        creators = ArcadLinkPool(uid: uid, socketPath: socketPath)
        self.verbose = verbose
    }

    /// Why arca-secretd could not start.
    public enum StartError: Error, CustomStringConvertible {
        /// Another provider owns the name (and, with `--replace`, does not allow replacement).
        case nameTaken(owner: String, replaceAsked: Bool)
        case bus(BusError)

        public var description: String {
            switch self {
            case .nameTaken(let owner, false):
                "\(SecretService.busName) is owned by \(owner); stop it (see arca-secretd(1) for gnome-keyring) "
                    + "or run arca-secretd --replace"
            case .nameTaken(let owner, true):
                "\(SecretService.busName) is owned by \(owner), which does not allow replacement; stop it first"
            case .bus(let e): "session bus: \(e)"
            }
        }
    }

    /// Registers the objects, takes the name (from an owner that allows it, with
    /// `replace`) and serves until the bus closes or the name is lost. Returns the
    /// reason it stopped.
    public func run(replace: Bool) throws(StartError) -> String {
        var lost: String?
        do {
            try bus.addFallback(SecretObject.base) { [unowned self] message in handle(message) }
            try bus.addFallback(Self.callbackBase) { [unowned self] message in prompterCallback(message) }
            // Only names that lose their owner (arg2, the new owner, empty): a rule without it
            // woke this process for every connection to the bus as it arrived, too (one wake-up
            // per client for nothing: `secret-tool lookup` woke it twice for NameOwnerChanged).
            try bus.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',"
                    + "arg2=''"
            ) { [unowned self] message in clientGone(message) }
            try bus.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameLost'"
            ) { message in
                if (try? message.readString()) == Self.busName { lost = "lost \(Self.busName) to another provider" }
            }
            guard try bus.requestName(Self.busName, replace: replace) else {
                throw StartError.nameTaken(owner: ownerDescription(), replaceAsked: replace)
            }
        } catch let e as StartError {
            throw e
        } catch let e as BusError {
            throw .bus(e)
        } catch {
            throw .bus(BusError(call: "start", errno: .invalidArgument, name: nil))
        }
        unlocked = arcad.unlockedClasses()
        if let s = try? arcad.collectionSettings() { settings = s }
        listener.start()
        while lost == nil {
            do {
                messagesSinceTrim += try bus.processAll()
                flushCreates()
                flushSecretReads()
                wake.drain()
                deliverEvents()
                deliverPromptChecks()
                if lost != nil { break }
                // About to wait: the bus is drained. A flood of calls (libsecret sends one
                // GetAll per item at once: 10,000 for search --all) leaves sd-bus's queues and
                // the replies' buffers freed but held by malloc; RSS went 11 -> 20 MB.
                if trimHeap || cache.takeStartedOver() || messagesSinceTrim >= Self.messagesPerTrim {
                    Heap.trim()
                    trimHeap = false
                    messagesSinceTrim = 0
                }
                // The next DH key pair is made once the bus has been quiet a moment: made at
                // once, it delayed the call a client sends right after OpenSession's reply
                // (SearchItems, in `secret-tool lookup`) by an exponentiation.
                if spareKey != nil {
                    try bus.wait(orReadable: wake.fd)
                } else if try !bus.wait(orReadable: wake.fd, limit: Self.quietBeforeSpareKeyMilliseconds) {
                    spareKey = try? DHKeyPair.generate()
                }
            } catch {
                return "session bus: \(error)"
            }
        }
        return lost ?? "stopped"
    }

    /// "pid N (/usr/bin/gnome-keyring-daemon)" for the current owner of the name.
    private func ownerDescription() -> String {
        guard
            let reply = try? bus.call(
                "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID",
                [Self.busName]), let pid = try? reply.readUInt32()
        else { return "another process" }
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        if n > 0 {
            return "pid \(pid) (\(String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)))"
        }
        return "pid \(pid)"
    }

    func log(_ text: String) {
        guard verbose else { return }
        try? FileDescriptor.standardError.writeAll("arca-secretd: \(text)\n")
    }

    func newNumber() -> String {
        defer { nextNumber += 1 }
        return String(nextNumber)
    }

    // MARK: Clients that leave

    /// A client's unique name left the bus: its sessions and prompts go with it.
    private func clientGone(_ message: BusMessage) {
        guard let name = try? message.readString(), (try? message.readString()) != nil,
            let newOwner = try? message.readString(), newOwner.isEmpty, name.hasPrefix(":")
        else { return }
        sessions = sessions.filter { $0.value.owner != name }
        prompts = prompts.filter { $0.value.owner != name }
        flowsGone(with: name)
    }

    // MARK: Events from arcad

    private func deliverEvents() {
        let (events, missed) = listener.take()
        let login = CollectionID.login.path
        if missed { bus.emit(SecretObject.base, Interfaces.service, "CollectionChanged", [.objectPath(login)]) }
        if missed { forgetItems() }
        for event in events {
            switch event {
            case .lockChanged(let classes):
                forgetItems()
                guard classes != unlocked else { continue }
                unlocked = classes
                bus.emit(
                    login, Interfaces.properties, "PropertiesChanged",
                    [
                        .string(Interfaces.collection), .properties(["Locked": .bool(loginLocked)]),
                        .array(elementSignature: "s", []),
                    ])
            case .itemAdded(let ref):
                // Keychain items (not Secret Service ones) are not in the collection.
                // One this process created is cached already: no need to ask.
                guard cache[ReferenceText.encode(ref)] != nil || isAttributeItem(ref) else { continue }
                bus.emit(login, Interfaces.collection, "ItemCreated", [.objectPath(itemPath(ref))])
            case .itemChanged(let ref):
                cache[ReferenceText.encode(ref)] = nil
                guard isAttributeItem(ref) else { continue }
                bus.emit(login, Interfaces.collection, "ItemChanged", [.objectPath(itemPath(ref))])
            case .itemDeleted(let ref):
                cache[ReferenceText.encode(ref)] = nil
                uncachedFound.remove(ReferenceText.encode(ref))
                bus.emit(login, Interfaces.collection, "ItemDeleted", [.objectPath(itemPath(ref))])
            case .itemsChanged:
                forgetItems()
                bus.emit(SecretObject.base, Interfaces.service, "CollectionChanged", [.objectPath(login)])
            case .syncChanged:
                continue  // the sync agent's business: no Secret Service item changed
            }
        }
    }

    private func isAttributeItem(_ ref: [UInt8]) -> Bool {
        guard let list = try? arcad.items(.getAttributeItems(uid: arcad.uid, references: [ref], returnSecrets: false))
        else { return false }
        return !list.items.isEmpty || !list.locked.isEmpty
    }

    /// A login item seen unlocked: from the cache, else from arcad (then cached).
    /// nil when it is locked or gone. A miss on an item of the last search fetches
    /// every uncached item of that search at once.
    func cachedItem(_ id: String) throws -> AttributeItemInfo? {
        if let hit = cache[id] { return hit }
        guard ReferenceText.decode(id) != nil else { return nil }
        var ids = [id]
        if uncachedFound.contains(id) {
            ids += uncachedFound.lazy.filter { $0 != id }.prefix(Self.cacheLimit - 1)
        }
        for id in ids { uncachedFound.remove(id) }
        if ids.count > 256 { trimHeap = true }
        let list = try arcad.items(
            .getAttributeItems(uid: arcad.uid, references: ids.compactMap(ReferenceText.decode), returnSecrets: false))
        cache.remember(list.items)
        return cache[id]
    }

    /// Drops every cached item (a lock change, or events missed).
    func forgetItems() {
        cache.removeAll()
        uncachedFound.removeAll()
    }

    func itemPath(_ ref: [UInt8]) -> String { CollectionID.login.path + "/" + ReferenceText.encode(ref) }

    /// The login collection is locked when the class of its new items is
    /// (`secret_service_class` in arca.conf(5)).
    var loginLocked: Bool { settings.isLocked(unlocked: unlocked) }
}

/// The interface names.
enum Interfaces {
    static let service = "org.freedesktop.Secret.Service"
    static let collection = "org.freedesktop.Secret.Collection"
    static let item = "org.freedesktop.Secret.Item"
    static let session = "org.freedesktop.Secret.Session"
    static let prompt = "org.freedesktop.Secret.Prompt"
    static let properties = "org.freedesktop.DBus.Properties"
    static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let peer = "org.freedesktop.DBus.Peer"
}
