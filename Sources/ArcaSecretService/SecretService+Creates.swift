import ArcaCrypto
import ArcaProtocol
import Synchronization

/// A login CreateItem waiting for the end of the current round of bus messages.
struct PendingCreate {
    /// The call, kept to answer it once arcad has stored the item.
    let message: BusMessage
    let label: String
    let attributes: [String: String]
    let secret: IncomingSecret
    let replace: Bool
}

/// Connections to arcad for CreateItem calls sent at once (the bus thread keeps its own).
// @unchecked: the links are touched only while `links` is held, or by the one thread that took one.
final class ArcadLinkPool: @unchecked Sendable {
    private let uid: UInt32
    private let socketPath: String
    private let links = Mutex<[ArcadLink]>([])

    init(uid: UInt32, socketPath: String) {
        self.uid = uid
        self.socketPath = socketPath
    }

    func take() -> ArcadLink {
        links.withLock { $0.popLast() } ?? ArcadLink(uid: uid, socketPath: socketPath)
    }

    func giveBack(_ link: ArcadLink) { links.withLock { $0.append(link) } }
}

/// CreateItem on the login collection, pipelined: the calls that arrive together (from
/// several clients, or one client's async calls) are sent to arcad at once over as many
/// connections, so that arcad's group commit makes them durable with one sync. Each
/// call is still answered only after arcad has answered it, i.e. once its item is
/// durable. A lone call goes out at once on the bus thread, as before.
extension SecretService {
    /// At most this many CreateItem calls go to arcad at once.
    static let concurrentCreates = 8

    /// Keeps a login CreateItem until the current round of bus messages ends.
    func queueCreate(
        _ m: BusMessage, _ properties: [String: ReadValue], _ secret: IncomingSecret, replace: Bool
    ) {
        let (label, attributes) = Self.labelAndAttributes(properties)
        pendingCreates.append(
            PendingCreate(message: m.retained(), label: label, attributes: attributes, secret: secret, replace: replace)
        )
    }

    /// The Label and Attributes of CreateItem's properties (absent: empty).
    static func labelAndAttributes(_ properties: [String: ReadValue]) -> (label: String, attributes: [String: String]) {
        var label = ""
        if case .string(let s)? = properties[Interfaces.item + ".Label"] { label = s }
        var attributes: [String: String] = [:]
        if case .stringDictionary(let d)? = properties[Interfaces.item + ".Attributes"] { attributes = d }
        return (label, attributes)
    }

    /// Sends the queued CreateItem calls to arcad and answers each.
    func flushCreates() {
        while !pendingCreates.isEmpty {
            let batch = Array(pendingCreates.prefix(Self.concurrentCreates))
            pendingCreates.removeFirst(batch.count)
            for (create, result) in zip(batch, addAll(batch)) {
                switch result {
                case .success(let item):
                    cache[ReferenceText.encode(item.reference)] = item
                    // ItemCreated/ItemChanged come from arcad's event stream, for every client alike.
                    bus.reply(to: create.message, [.objectPath(itemPath(item.reference)), .objectPath("/")])
                case .failure(let e):
                    log("\(Interfaces.collection).CreateItem: \(e.name)")
                    bus.replyError(to: create.message, name: e.name, message: e.message)
                }
            }
        }
    }

    /// The first add on the bus thread's own connection, the others on pooled ones,
    /// each on its own thread; returns when all are answered.
    private func addAll(_ batch: [PendingCreate]) -> [Result<AttributeItemInfo, SecretError>] {
        guard batch.count > 1, let latch = Latch() else { return batch.map { Self.add(AddFields($0), over: arcad) } }
        let results = Mutex<[Int: Result<AttributeItemInfo, SecretError>]>([:])
        let pool = creators
        var started = 0
        for i in 1..<batch.count {
            let create = AddFields(batch[i])
            let link = pool.take()
            let ok = Threads.detach {
                let result = Self.add(create, over: link)
                pool.giveBack(link)
                results.withLock { $0[i] = result }
                latch.post()
            }
            if ok { started += 1 } else { pool.giveBack(link) }
        }
        let first = Self.add(AddFields(batch[0]), over: arcad)
        latch.wait(count: started)
        let others = results.withLock { $0 }
        return batch.indices.map { i in
            if i == 0 { return first }
            // A thread that could not start: its add is sent here, after the others.
            return others[i] ?? Self.add(AddFields(batch[i]), over: arcad)
        }
    }

    /// One add request to arcad; the secret's plain copy is zeroed once sent.
    private static func add(_ create: AddFields, over link: ArcadLink) -> Result<AttributeItemInfo, SecretError> {
        var bytes = create.secret.value.withUnsafeBytes { Array($0) }
        defer { SecureWipe.zero(&bytes) }
        do throws(SecretError) {
            let list = try link.items(
                .addAttributeItem(
                    AttributeItemAdd(
                        uid: link.uid, label: create.label, attributes: create.attributes,
                        contentType: create.secret.contentType, secret: bytes, replace: create.replace)))
            guard let item = list.items.first else { return .failure(.failed("arcad returned no item")) }
            return .success(item)
        } catch {
            return .failure(error)
        }
    }
}

/// What a worker thread needs of a pending CreateItem (not the bus message, which
/// stays with the bus thread).
private struct AddFields: @unchecked Sendable {
    // @unchecked: SecretBytes is Sendable; the rest are values.
    let label: String
    let attributes: [String: String]
    let secret: IncomingSecret
    let replace: Bool

    init(_ create: PendingCreate) {
        label = create.label
        attributes = create.attributes
        secret = create.secret
        replace = create.replace
    }
}
