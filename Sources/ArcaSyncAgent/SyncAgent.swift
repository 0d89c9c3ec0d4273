import ArcaSync

/// The agent's one step, run whenever Syncthing or arcad says something changed: this
/// device's new ciphertext goes from arcad into its own directory of the synced folder
/// (then a REST scan of that directory), and peers' new files go from the folder to arcad.
/// It keeps only positions in memory; arcad is the one that verifies and merges.
public final class SyncAgent {
    let arcad: AgentArcad
    let folder: SyncFolder
    let scanner: ((String) throws(SyncAgentError) -> Void)?
    let log: (String) -> Void
    /// This device's id in hex.
    public let device: String
    /// The highest own record written to the folder.
    var written: UInt64
    /// The head and approvals last written (skip identical rewrites, which Syncthing would replicate).
    var writtenHead: [UInt8]?
    var writtenApprovals: [String: [UInt8]] = [:]
    var writtenSnapshot: [UInt8]?
    /// Per peer: the highest record handed to arcad, and the last head and approvals handed over.
    var pushed: [String: UInt64]
    var pushedHeads: [String: [UInt8]] = [:]
    var pushedApprovals: [String: [UInt8]] = [:]
    var pushedSnapshots: [String: [UInt8]] = [:]
    /// Files arcad refused (name and content digest): reported once, offered again only if the
    /// content changes. A refused record ends its author's run until then: what follows it
    /// cannot chain.
    var refused: Set<String> = []
    /// Whether arcad queued a file this agent handed over and may still drop it as expired
    /// (a file waiting for a circle update waits at most 24 hours). While it does, each pass
    /// asks arcad how many waiting files expired; when that grows, the agent offers the folder
    /// again from arcad's applied positions, as it does at a start (before, only a restart did).
    public private(set) var awaitingQueued = false
    /// arcad's count of expired waiting files when last asked; nil from an arcad that does not
    /// say (one from before the count): then the agent never asks again.
    var expiredSeen: UInt32?
    /// Files per push request (a record is at most 1 MiB; a frame at most 2 MiB).
    static let batchBytes = 1 << 20

    /// An agent for `device` (hex) over `arcad` and `folder`; `scanner` asks Syncthing to
    /// rescan a directory of the folder (nil in tests).
    public init(
        device: String, arcad: AgentArcad, folder: SyncFolder,
        scanner: ((String) throws(SyncAgentError) -> Void)?, log: @escaping (String) -> Void
    ) throws(SyncAgentError) {
        self.device = device
        self.arcad = arcad
        self.folder = folder
        self.scanner = scanner
        self.log = log
        try folder.create()
        written = folder.recordSeqs(device).last ?? 0
        pushed = try arcad.appliedSeqs()
        expiredSeen = try arcad.waitingFiles()?.expired
    }

    /// Moves everything that can move now. Returns the number of files written and pushed.
    @discardableResult
    public func pass() throws(SyncAgentError) -> (written: Int, pushed: Int) {
        let out = try sendOwn()
        var into = try takePeers()
        // After the hand-over (its status is the one the run loop's mesh reuses); what expired
        // is offered again in this same pass.
        if reofferExpired() { into += try takePeers() }
        return (out, into)
    }

    /// When arcad dropped waiting files as expired since it was last asked: forgets what was
    /// handed over, so that the pass offers again whatever arcad has not applied; true then.
    /// A failure to ask is logged, not thrown: the pass's files already moved.
    func reofferExpired() -> Bool {
        guard awaitingQueued, let seen = expiredSeen else { return false }
        do {
            guard let counts = try arcad.waitingFiles() else {
                // arcad stopped saying (an older one after a restart): stop watching.
                awaitingQueued = false
                expiredSeen = nil
                return false
            }
            expiredSeen = counts.expired
            // Equal: nothing expired. Lower: arcad's count started again (a sync reset removed
            // its queue), so nothing this agent handed over expired either.
            guard counts.expired > seen else {
                if counts.waiting == 0 { awaitingQueued = false }
                return false
            }
            pushed = try arcad.appliedSeqs()
            pushedHeads = [:]
            pushedApprovals = [:]
            pushedSnapshots = [:]
            awaitingQueued = counts.waiting > 0
            log("arcad dropped \(counts.expired - seen) waiting files as expired: offering the folder again")
            return true
        } catch {
            log("cannot ask arcad which waiting files expired (asked again at the next pass): \(error.description)")
            return false
        }
    }

    /// arcad's outbox → this device's directory, then one scan of it.
    func sendOwn() throws(SyncAgentError) -> Int {
        var count = 0
        while true {
            let outbox = try arcad.pull(after: written)
            for record in outbox.records where record.seq > written {
                try folder.writeRecord(record.bytes, device: device, seq: record.seq)
                written = record.seq
                count += 1
            }
            if let head = outbox.head, head != writtenHead {
                try folder.write(head, device: device, "head")
                writtenHead = head
                count += 1
            }
            for approval in outbox.approvals
            where SyncFolder.isDeviceName(approval.device) && writtenApprovals[approval.device] != approval.bytes {
                try folder.write(approval.bytes, device: device, "approvals", approval.device)
                writtenApprovals[approval.device] = approval.bytes
                count += 1
            }
            if let snapshot = outbox.snapshot, snapshot != writtenSnapshot {
                try folder.write(snapshot, device: device, "snapshot")
                writtenSnapshot = snapshot
                count += 1
            }
            guard outbox.more, !outbox.records.isEmpty else { break }
        }
        if count > 0, let scanner { try scanner(device) }
        return count
    }

    /// Peers' directories → arcad: approvals naming this device, each peer's records in an
    /// unbroken run after the last one handed over, then its head and its snapshot.
    func takePeers() throws(SyncAgentError) -> Int {
        var files: [AgentFile] = []
        for peer in folder.devices() where peer != device {
            for approved in folder.approvals(peer) where approved == device {
                let key = peer + "/approvals/" + approved
                // Re-published approvals (a new member, a new epoch key) change content: offer them again.
                guard let bytes = folder.read(peer, "approvals", approved), pushedApprovals[key] != bytes,
                    !refused.contains(Self.key(key, bytes))
                else { continue }
                files.append(AgentFile(kind: .approval(device: approved), author: peer, bytes: bytes))
            }
            var next = (pushed[peer] ?? 0) + 1
            for seq in folder.recordSeqs(peer) where seq >= next {
                guard seq == next, let bytes = folder.read(peer, "records", SyncFolder.recordName(seq)) else { break }
                guard !refused.contains(Self.key(peer + "/records/" + SyncFolder.recordName(seq), bytes)) else { break }
                files.append(AgentFile(kind: .record(seq: seq), author: peer, bytes: bytes))
                next += 1
            }
            if let head = folder.read(peer, "head"), head != pushedHeads[peer],
                !refused.contains(Self.key(peer + "/head", head))
            {
                files.append(AgentFile(kind: .head, author: peer, bytes: head))
            }
            // A peer that collected tombstones publishes a snapshot; this device resyncs from it
            // if it was away past the horizon.
            if let snapshot = folder.read(peer, "snapshot"), snapshot != pushedSnapshots[peer],
                !refused.contains(Self.key(peer + "/snapshot", snapshot))
            {
                files.append(AgentFile(kind: .snapshot, author: peer, bytes: snapshot))
            }
        }
        var count = 0
        var batch: [AgentFile] = []
        var size = 0
        for file in files {
            if !batch.isEmpty, size + file.bytes.count > Self.batchBytes {
                count += try push(batch)
                batch = []
                size = 0
            }
            batch.append(file)
            size += file.bytes.count
        }
        if !batch.isEmpty { count += try push(batch) }
        return count
    }

    func push(_ batch: [AgentFile]) throws(SyncAgentError) -> Int {
        let outcomes = try arcad.push(batch)
        guard outcomes.count == batch.count else { throw .arcad("\(outcomes.count) outcomes for \(batch.count) files") }
        var count = 0
        for (file, outcome) in zip(batch, outcomes) {
            let name = Self.name(file)
            switch outcome {
            case .applied, .queued:
                count += 1
                remember(file)
                if outcome == .queued, expiredSeen != nil { awaitingQueued = true }
            case .refused(let why):
                if refused.insert(Self.key(name, file.bytes)).inserted { log("refused \(name): \(why)") }
            case .notYet:
                continue
            }
        }
        return count
    }

    func remember(_ file: AgentFile) {
        switch file.kind {
        // Only an unbroken run advances: after a refused record, the ones behind it are offered again.
        case .record(let seq): if seq == (pushed[file.author] ?? 0) + 1 { pushed[file.author] = seq }
        case .head: pushedHeads[file.author] = file.bytes
        case .approval(let device): pushedApprovals[file.author + "/approvals/" + device] = file.bytes
        case .snapshot: pushedSnapshots[file.author] = file.bytes
        }
    }

    /// A file's name with a digest of its content.
    static func key(_ name: String, _ bytes: [UInt8]) -> String { name + "#" + Digest.of(bytes).description }

    static func name(_ file: AgentFile) -> String {
        switch file.kind {
        case .record(let seq): file.author + "/records/" + SyncFolder.recordName(seq)
        case .head: file.author + "/head"
        case .approval(let device): file.author + "/approvals/" + device
        case .snapshot: file.author + "/snapshot"
        }
    }
}
