import ArcaClient
import ArcaProtocol
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// arca-secretd's requests to arcad, as the user (SO_PEERCRED limits it to the
/// user's own vault). One connection, reopened when arcad closed an idle one.
// @unchecked: used by one thread at a time (the bus thread's own link, or a pooled
// one that one CreateItem worker took from `ArcadLinkPool` and gives back).
final class ArcadLink: @unchecked Sendable {
    let uid: UInt32
    let socketPath: String
    private var client: ArcadClient?

    init(uid: UInt32, socketPath: String) {
        self.uid = uid
        self.socketPath = socketPath
    }

    /// Sends `request`; an `.error` reply becomes `SecretError`. arcad closes
    /// connections idle past its client timeout: a kept one closed before arcad read
    /// the request is retried once, fresh. Never a request arcad may have read (after a
    /// timeout or an end of stream): a CreateItem or Delete must not run twice.
    func send(_ request: Request) throws(SecretError) -> Reply {
        var request = request
        defer { request.wipeSecrets() }
        let reply: Reply
        switch attempt(request) {
        case .success(let first): reply = first
        case .failure(let failure) where failure.retryable:
            switch attempt(request) {
            case .success(let second): reply = second
            case .failure(let failure): throw SecretError.failed("arcad: \(failure.error)")
            }
        case .failure(let failure): throw SecretError.failed("arcad: \(failure.error)")
        }
        if case .error(let status, let message) = reply { throw SecretError(status: status, message: message) }
        return reply
    }

    /// Why an attempt failed, and whether sending again cannot run the request twice.
    private struct AttemptFailure: Error {
        let error: ClientError
        let retryable: Bool
    }

    // Kept out of line: inlining the client's I/O into a retry loop made the optimizer
    // spend minutes on this file.
    @inline(never)
    private func attempt(_ request: Request) -> Result<Reply, AttemptFailure> {
        let kept = client
        client = nil
        let connection: ArcadClient
        if let kept {
            connection = kept
        } else {
            do { connection = try ArcadClient(path: socketPath, timeoutMilliseconds: 10_000) } catch {
                return .failure(AttemptFailure(error: error, retryable: false))
            }
        }
        do {
            let reply = try connection.send(request)
            client = connection
            return .success(reply)
        } catch {
            // Only a kept connection can have been closed for idling.
            let retryable = kept != nil && connection.mayResend(after: error)
            return .failure(AttemptFailure(error: error, retryable: retryable))
        }
    }

    /// The attribute items of a reply.
    func items(_ request: Request) throws(SecretError) -> AttributeItemList {
        guard case .attributeItems(let list) = try send(request) else { throw SecretError.failed("unexpected reply") }
        return list
    }

    /// The references of matching items (no attributes: what a D-Bus search returns).
    func references(_ attributes: [String: String]) throws(SecretError) -> AttributeReferenceList {
        let request = Request.searchAttributeReferences(uid: uid, attributes: attributes)
        guard case .attributeReferences(let list) = try send(request) else {
            throw SecretError.failed("unexpected reply")
        }
        return list
    }

    /// The login collection's label and class (renamed first when `label` is given).
    func collectionSettings(label: String? = nil) throws(SecretError) -> CollectionSettings {
        guard case .collectionSettings(let settings) = try send(.collectionSettings(uid: uid, label: label)) else {
            throw SecretError.failed("unexpected reply")
        }
        return settings
    }

    /// The lock classes the user's vault holds now.
    func unlockedClasses() -> LockClasses {
        guard case .status(let status)? = try? send(.status(uid: uid)) else { return [] }
        return status.unlocked
    }
}

/// Long-polls arcad for the user's vault events on its own thread and hands them
/// to the bus thread (through `queue` and a wake of the bus loop).
final class EventListener: Sendable {
    private let uid: UInt32
    private let socketPath: String
    private let wake: WakeSignal
    private let queue = Mutex<[VaultEvent]>([])
    /// Set when events were missed: the bus thread re-reads everything.
    private let missed = Atomic<Bool>(false)

    init(uid: UInt32, socketPath: String, wake: WakeSignal) {
        self.uid = uid
        self.socketPath = socketPath
        self.wake = wake
    }

    /// Events since the last call, and whether some were missed.
    func take() -> (events: [VaultEvent], missed: Bool) {
        let events = queue.withLock { q in
            defer { q.removeAll() }
            return q
        }
        return (events, missed.exchange(false, ordering: .relaxed))
    }

    func start() {
        Threads.detach { [self] in run() }
    }

    private func run() {
        var after: UInt64 = 0
        while true {
            after = listen(after: after)
            // arcad restarted or is gone: retry; the next batch says what was missed.
            usleep(500_000)
        }
    }

    /// Long-polls on one connection until it fails; returns the last number seen.
    @inline(never)
    private func listen(after start: UInt64) -> UInt64 {
        var after = start
        guard let client = try? ArcadClient(path: socketPath, timeoutMilliseconds: 30_000) else { return after }
        while case .events(let batch)? = try? client.send(
            .waitEvents(uid: uid, after: after, timeoutMilliseconds: ProtocolLimits.maximumEventWaitMilliseconds))
        {
            // The first poll (after 0) only learns the current number.
            if after != 0, batch.missed { missed.store(true, ordering: .relaxed) }
            after = batch.next
            if !batch.events.isEmpty || batch.missed {
                queue.withLock { $0 += batch.events }
                wake.wake()
            }
        }
        return after
    }
}
