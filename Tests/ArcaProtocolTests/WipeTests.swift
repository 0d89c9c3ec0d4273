import ArcaProtocol
import Testing

@Suite("Wiping")
struct WipeTests {
    /// Reads `count` bytes from the start of an array's storage, past its
    /// count but within its capacity: the only way to see stale spare bytes.
    static func storage(_ array: [UInt8], count: Int) -> [UInt8] {
        array.withUnsafeBufferPointer { Array(UnsafeBufferPointer(start: $0.baseAddress, count: count)) }
    }

    @Test("zero covers the spare capacity and keeps count and storage")
    func spareCapacity() {
        var bytes = [UInt8](repeating: 0xAA, count: 64)
        bytes.removeLast(48)
        let base = bytes.withUnsafeBufferPointer { $0.baseAddress }
        let capacity = bytes.capacity
        #expect(Self.storage(bytes, count: 64) == [UInt8](repeating: 0xAA, count: 64))
        SecureWipe.zero(&bytes)
        #expect(bytes == [UInt8](repeating: 0, count: 16))
        #expect(bytes.capacity == capacity)
        #expect(bytes.withUnsafeBufferPointer { $0.baseAddress } == base)
        #expect(Self.storage(bytes, count: 64) == [UInt8](repeating: 0, count: 64))
    }

    @Test("removeFirst zeroes the consumed frame and the stale tail")
    func removeFirst() {
        var buffer = [UInt8](repeating: 0xAA, count: 10) + [UInt8](repeating: 0xBB, count: 6)
        let capacity = buffer.capacity
        SecureWipe.removeFirst(10, from: &buffer)
        #expect(buffer == [UInt8](repeating: 0xBB, count: 6))
        #expect(buffer.capacity == capacity)
        #expect(
            Self.storage(buffer, count: 16) == [UInt8](repeating: 0xBB, count: 6) + [UInt8](repeating: 0, count: 10))
        SecureWipe.removeFirst(100, from: &buffer)
        #expect(buffer.isEmpty && Self.storage(buffer, count: 16) == [UInt8](repeating: 0, count: 16))
    }

    @Test("wipeSecrets zeroes a decoded key in place")
    func requestInPlace() throws {
        let frame = try Frame.encode(
            Request.changePassword(uid: 1, oldKey: Fixtures.key, newKey: Fixtures.otherKey, parameters: Fixtures.kdf),
            requestID: 1)
        guard case .complete(var decoded) = Frame.decode(frame, as: Request.self),
            case .changePassword(_, let oldKey, _, _) = decoded.message
        else {
            Issue.record("not decoded")
            return
        }
        let base = oldKey.withUnsafeBufferPointer { $0.baseAddress }
        _ = consume oldKey
        decoded.message.wipeSecrets()
        guard case .changePassword(let uid, let wipedOld, let wipedNew, let parameters) = decoded.message else {
            Issue.record("case changed")
            return
        }
        #expect(uid == 1 && parameters == Fixtures.kdf)
        #expect(wipedOld == [UInt8](repeating: 0, count: 32) && wipedNew == [UInt8](repeating: 0, count: 32))
        #expect(wipedOld.withUnsafeBufferPointer { $0.baseAddress } == base, "zeroed in place, not a copy")
    }

    @Test("wipeSecrets covers every secret field", arguments: Fixtures.requests)
    func everyRequest(_ request: Request) {
        var wiped = request
        wiped.wipeSecrets()
        #expect(wiped.kind == request.kind)
        switch wiped {
        case .unlock(_, let key), .enroll(_, let key, _), .rotateRecoveryKey(_, let key), .passwordReset(_, let key, _),
            .closeSession(_, let key), .unlockWithPassword(_, let key), .loginUnlock(_, let key),
            .loginUnlockDerived(_, let key, _):
            #expect(key.allSatisfy { $0 == 0 })
        case .exportItems(_, let secret, _), .importItems(_, _, let secret), .syncRecover(_, _, let secret),
            .stageExport(_, let secret, _), .importStaged(_, let secret):
            #expect(secret.allSatisfy { $0 == 0 })
        case .changePassword(_, let a, let b, _), .recover(_, let a, let b, _), .confirmCandidate(_, let a, let b):
            #expect((a + b).allSatisfy { $0 == 0 })
        case .openSession(let s): #expect(s.token.allSatisfy { $0 == 0 })
        case .add(let add): #expect(add.secret.allSatisfy { $0 == 0 })
        case .update(let update): #expect((update.secret ?? []).allSatisfy { $0 == 0 })
        case .addAttributeItem(let add): #expect(add.secret.allSatisfy { $0 == 0 })
        case .updateAttributeItem(let update): #expect((update.secret ?? []).allSatisfy { $0 == 0 })
        case .status, .kdfParameters, .lock, .lockAll, .copyMatching, .delete, .listSessions, .grant, .revokeGrant,
            .listGrants, .searchAttributeItems, .getAttributeItems, .deleteAttributeItem, .waitEvents,
            .searchAttributeReferences, .collectionSettings, .syncInit, .syncJoin, .syncApprove, .syncPull, .syncPush,
            .syncRemove, .syncStatus, .syncConflicts, .syncResolve, .readExport, .stageImport:
            #expect(wiped == request)
        }
    }

    @Test("wipeSecrets zeroes item data and recovery keys of replies")
    func replies() {
        var items = Reply.items([ResultItem(data: [1, 2, 3], persistentRef: [4]), ResultItem()])
        items.wipeSecrets()
        #expect(items == .items([ResultItem(data: [0, 0, 0], persistentRef: [4]), ResultItem()]))
        var key = Reply.recoveryKey(Array("ABCD".utf8))
        key.wipeSecrets()
        #expect(key == .recoveryKey([0, 0, 0, 0]))
        let item = AttributeItemInfo(
            reference: [1], label: "l", attributes: ["k": "v"], contentType: "", created: 0, modified: 0,
            accessible: .afterFirstUnlock, secret: [7, 7])
        var list = Reply.attributeItems(AttributeItemList(items: [item], locked: [[2]]))
        list.wipeSecrets()
        var wiped = item
        wiped.secret = [0, 0]
        #expect(list == .attributeItems(AttributeItemList(items: [wiped], locked: [[2]])))
        var candidate = Reply.candidate(token: Fixtures.key)
        candidate.wipeSecrets()
        #expect(candidate == .candidate(token: [UInt8](repeating: 0, count: 32)))
    }
}
