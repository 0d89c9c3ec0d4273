import ArcaCrypto
import ArcaProtocol
import ArcaSync
import Foundation
import Testing

@testable import ArcaDaemon

/// One person's machines, each an in-process arcad with its own state directory and kernel
/// twin, the same uid on each (one person). Files move between them by hand, exactly as the
/// agent moves them: pull from one, push to another.
final class SyncCircle {
    let uid: UInt32
    var machines: [TestDaemon]
    var keys: [[UInt8]] = []
    var devices: [[UInt8]] = []

    /// `count` machines; the first makes the circle, the others join and are approved by it.
    /// `clockOffsets[i]` moves machine i's sync clock (`sync_clock_offset_ms`).
    init(uid: UInt32, count: Int, clockOffsets: [Int] = []) throws {
        self.uid = uid
        machines = try (0..<count).map { index in
            var config = DaemonConfig()
            config.syncClockOffsetMilliseconds = index < clockOffsets.count ? clockOffsets[index] : 0
            return try TestDaemon(config: config)
        }
        for m in machines { keys.append(try enrolled(m, uid)) }
        guard case .syncDevice(let first) = machines[0].send(.syncInit(uid: uid), as: uid) else {
            throw SyncCircleError.setUp("init")
        }
        devices = [first]
        for index in 1..<count { try join(index) }
    }

    /// Machine `index` joins, approved by machine 0.
    func join(_ index: Int) throws {
        guard case .syncDevice(let id) = machines[index].send(.syncJoin(uid: uid, approver: devices[0]), as: uid) else {
            throw SyncCircleError.setUp("join")
        }
        devices.append(id)
        guard
            case .syncApproval(_, let sas) = machines[0].send(
                .syncApprove(uid: uid, device: id, shortAuthenticationString: nil), as: uid),
            case .syncApproval(let approval, _) = machines[0].send(
                .syncApprove(uid: uid, device: id, shortAuthenticationString: sas), as: uid),
            !approval.isEmpty
        else { throw SyncCircleError.setUp("approve") }
        _ = carry(0, index)
    }

    func cleanUp() { for m in machines { m.cleanUp() } }

    /// Everything machine `from` publishes, as the files the agent would write.
    func files(of from: Int, for target: Int) -> [SyncFile] {
        agentFiles(machines[from].send(.syncPull(uid: uid, after: 0), as: uid), for: devices[target])
    }

    /// Moves machine `from`'s files to machine `to`; the outcomes.
    @discardableResult
    func carry(_ from: Int, _ to: Int) -> [SyncFileOutcome] {
        push(files(of: from, for: to), to: to)
    }

    func push(_ files: [SyncFile], to: Int) -> [SyncFileOutcome] {
        guard case .syncPushResult(let outcomes) = machines[to].send(.syncPush(uid: uid, files: files), as: uid) else {
            return []
        }
        return outcomes
    }

    /// Every machine's files to every other, `rounds` times.
    func exchangeAll(rounds: Int = 2) {
        for _ in 0..<rounds {
            for from in machines.indices { for to in machines.indices where to != from { carry(from, to) } }
        }
    }

    /// Machine 0 removes machine `index` from the circle; nil (and a recorded issue) if arcad refused.
    func remove(_ index: Int) -> SyncRemoval? {
        guard case .syncRemoval(let removal) = machines[0].send(.syncRemove(uid: uid, device: devices[index]), as: uid)
        else {
            Issue.record("remove failed")
            return nil
        }
        return removal
    }

    func status(_ index: Int) -> SyncStatus? {
        guard case .syncStatus(let s) = machines[index].send(.syncStatus(uid: uid), as: uid) else { return nil }
        return s
    }

    /// The replica's merged-state digest on machine `index`.
    func digest(_ index: Int) throws -> Digest? {
        try machines[index].daemon.context(uid).withLock { state throws(HandlerError) in state.sync?.replica.stateDigest
        }
    }

    /// Adds a synchronizable generic password on machine `index`.
    @discardableResult
    func addSynced(_ index: Int, _ service: String, _ secret: String, accessible: ArcaProtocol.Accessibility? = nil)
        -> Reply
    {
        var attributes = genp(service, "alice", accessible: accessible)
        attributes[.synchronizable] = .bool(true)
        return machines[index].send(
            .add(
                AddRequest(
                    vault: .user(uid: uid), itemClass: .genericPassword, attributes: attributes,
                    secret: Array(secret.utf8))), as: uid)
    }

    /// The synchronizable item's secret on machine `index`, or the error status.
    func synced(_ index: Int, _ service: String) -> String {
        var attributes = genp(service, "alice")
        attributes[.synchronizable] = .bool(true)
        let query = Query(itemClass: .genericPassword, attributes: attributes, returnFlags: .data)
        return secretText(machines[index].send(.copyMatching(vault: .user(uid: uid), query: query), as: uid))
    }

    /// Changes the secret of the synchronizable item on machine `index`.
    func updateSynced(_ index: Int, _ service: String, _ secret: String) -> Reply {
        var attributes = genp(service, "alice")
        attributes[.synchronizable] = .bool(true)
        return machines[index].send(
            .update(
                UpdateRequest(
                    vault: .user(uid: uid), query: Query(itemClass: .genericPassword, attributes: attributes),
                    attributes: [:], secret: Array(secret.utf8))), as: uid)
    }

    func deleteSynced(_ index: Int, _ service: String) -> Reply {
        var attributes = genp(service, "alice")
        attributes[.synchronizable] = .bool(true)
        return machines[index].send(
            .delete(vault: .user(uid: uid), query: Query(itemClass: .genericPassword, attributes: attributes)), as: uid)
    }
}

enum SyncCircleError: Error { case setUp(String) }

/// The files the agent would write from a pull's outbox, for the device `target`; none
/// when `pulled` is not an outbox.
func agentFiles(_ pulled: Reply, for target: [UInt8]) -> [SyncFile] {
    guard case .syncOutbox(let outbox) = pulled else { return [] }
    var files = outbox.approvals.filter { $0.device == target }.map {
        SyncFile(kind: .approval, author: outbox.device, bytes: $0.bytes)
    }
    files += outbox.records.map { SyncFile(kind: .record, author: outbox.device, bytes: $0.bytes) }
    if !outbox.head.isEmpty { files.append(SyncFile(kind: .head, author: outbox.device, bytes: outbox.head)) }
    if !outbox.snapshot.isEmpty {
        files.append(SyncFile(kind: .snapshot, author: outbox.device, bytes: outbox.snapshot))
    }
    return files
}

/// Whether `needle` occurs anywhere in `haystack`.
func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
    Data(haystack).range(of: Data(needle.utf8)) != nil
}
