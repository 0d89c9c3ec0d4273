import ArcaProtocol
import ArcaSync

/// The agent's connection to arcad: the sync requests, as the user (arcad decides from the
/// socket's peer credentials). One ArcadClient; not shared between threads.
public final class ArcadSyncLink: AgentArcad {
    let client: ArcadClient
    let uid: UInt32

    init(socket: String, uid: UInt32, timeoutMilliseconds: Int) throws(SyncAgentError) {
        do { client = try ArcadClient(path: socket, timeoutMilliseconds: timeoutMilliseconds) } catch {
            throw .arcad(error.description)
        }
        self.uid = uid
    }

    func send(_ request: Request, _ what: String) throws(SyncAgentError) -> Reply {
        let reply: Reply
        do { reply = try client.send(request) } catch { throw .arcad("\(what): \(error.description)") }
        if case .error(let status, let message) = reply {
            throw .arcad("\(what): \(message.isEmpty ? "\(status)" : message)")
        }
        return reply
    }

    public func wait(after: UInt64, timeoutMilliseconds: UInt32) throws(SyncAgentError) -> (
        next: UInt64, changed: Bool
    ) {
        let reply = try send(.waitEvents(uid: uid, after: after, timeoutMilliseconds: timeoutMilliseconds), "wait")
        guard case .events(let batch) = reply else { throw .arcad("wait: unexpected reply") }
        return (batch.next, batch.missed || !batch.events.isEmpty)
    }

    // The sync requests come with the `syncd` branch's protocol (syncJoin … syncStatus).
    public func deviceID() throws(SyncAgentError) -> [UInt8]? { throw .arcad("sync requests not available") }
    public func pull(after: UInt64) throws(SyncAgentError) -> AgentOutbox { throw .arcad("sync requests not available") }
    public func push(_ files: [AgentFile]) throws(SyncAgentError) -> [AgentOutcome] {
        throw .arcad("sync requests not available")
    }
    public func appliedSeqs() throws(SyncAgentError) -> [String: UInt64] { throw .arcad("sync requests not available") }
    func join(approver: [UInt8]) throws(SyncAgentError) -> [UInt8] { throw .arcad("sync requests not available") }
    func approve(_ device: [UInt8]) throws(SyncAgentError) -> (bytes: [UInt8], sas: String) {
        throw .arcad("sync requests not available")
    }
    func remove(_ device: [UInt8]) throws(SyncAgentError) -> [String] { throw .arcad("sync requests not available") }
    func status() throws(SyncAgentError) -> SyncStatusReport { throw .arcad("sync requests not available") }
}

/// arcad's view of the user's circle, for `status`.
struct SyncStatusReport {
    var device: [UInt8]

    func text(address: DeviceAddress, folder: String) -> String { "this device: \(address)\nfolder: \(folder)\n" }
    func json(address: DeviceAddress, folder: String) -> String { "{}\n" }
}
