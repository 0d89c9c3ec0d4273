import ArcaCrypto
import ArcaProtocol

/// A login Item.GetSecret waiting for the end of the current round of bus messages.
struct PendingSecretRead {
    /// The call, kept to answer it once arcad has read the item.
    let message: BusMessage
    let reference: [UInt8]
    let session: String
    let caller: String
}

/// Item.GetSecret on login items, batched: the calls that arrive together are read from
/// arcad in one request at the end of the round. `secret-tool search --all` sends one
/// GetSecret per item at once, and each was a round trip to arcad (1,000 for 1,000 items).
/// Any call that could change what a read returns (anything but reads) first answers the
/// queued reads, so a client's GetSecret never sees a change it sent after it.
extension SecretService {
    /// At most this many items' secrets are read in one request.
    static let secretReadsPerRequest = 256

    /// Queues a GetSecret of login item `id`; a session that is not the caller's fails now.
    func queueSecretRead(_ m: BusMessage, id: String, session: String, caller: String) throws {
        _ = try self.session(session, caller: caller)
        guard let reference = ReferenceText.decode(id) else { throw SecretError.noSuchObject }
        pendingSecretReads.append(
            PendingSecretRead(message: m.retained(), reference: reference, session: session, caller: caller))
    }

    /// Whether a call only reads (queued reads need not be answered before it).
    static func onlyReads(_ interface: String, _ member: String) -> Bool {
        switch interface {
        case Interfaces.properties: return member == "Get" || member == "GetAll"
        case Interfaces.introspectable, Interfaces.peer: return true
        case Interfaces.item: return member == "GetSecret"
        case Interfaces.service:
            return member == "GetSecrets" || member == "SearchItems" || member == "ReadAlias" || member == "OpenSession"
        case Interfaces.collection: return member == "SearchItems"
        default: return false
        }
    }

    /// Reads the queued GetSecret calls' items from arcad and answers each, in order.
    func flushSecretReads() {
        while !pendingSecretReads.isEmpty {
            let batch = Array(pendingSecretReads.prefix(Self.secretReadsPerRequest))
            pendingSecretReads.removeFirst(batch.count)
            answerSecretReads(batch[...])
        }
    }

    /// Reads `batch` in one request and answers each call; if the secrets together do not
    /// fit in one reply, each half on its own (secret sizes are not known before the read).
    /// A single read answers as one GetSecret call always did.
    private func answerSecretReads(_ batch: ArraySlice<PendingSecretRead>) {
        var list: AttributeItemList
        do {
            list = try arcad.items(
                .getAttributeItems(uid: arcad.uid, references: batch.map(\.reference), returnSecrets: true))
        } catch {
            // arcad's answer (`bufferTooSmall`) when a reply would not fit in one frame (2 MiB,
            // and one secret may be 1 MiB): split, down to single reads (ArcaDaemon's `Server`).
            if case .replyTooLarge = error, batch.count > 1 {
                let middle = batch.startIndex + batch.count / 2
                answerSecretReads(batch[..<middle])
                answerSecretReads(batch[middle...])
                return
            }
            for read in batch { bus.replyError(to: read.message, name: error.name, message: error.message) }
            return
        }
        defer { for i in list.items.indices { SecureWipe.zero(&list.items[i].secret) } }
        var found: [[UInt8]: Int] = [:]
        for (i, item) in list.items.enumerated() where found[item.reference] == nil { found[item.reference] = i }
        let locked = Set(list.locked)
        for read in batch {
            do {
                if locked.contains(read.reference) { throw SecretError.isLocked }
                guard let i = found[read.reference], var bytes = list.items[i].secret else {
                    throw SecretError.noSuchObject
                }
                // `bytes` is a copy (one item may be asked for twice): consumed into secure memory.
                let secret = try SecretBytes(consuming: &bytes)
                let value = try encode(
                    secret, contentType: list.items[i].contentType, session: read.session, caller: read.caller)
                bus.reply(to: read.message, [value])
            } catch let e as SecretError {
                log("\(Interfaces.item).GetSecret: \(e.name)")
                bus.replyError(to: read.message, name: e.name, message: e.message)
            } catch {
                bus.replyError(to: read.message, name: "org.freedesktop.DBus.Error.Failed", message: "internal error")
            }
        }
    }
}
