/// Wire form of the sync payloads: lists are u32-counted, ids and hashes length-prefixed with
/// their exact length, records and approvals at most ``ProtocolLimits/maximumSyncFileLength``.
extension WireWriter {
    mutating func syncID(_ id: [UInt8], field: String) throws(ProtocolError) {
        try fixed(id, field: field, length: ProtocolLimits.syncDeviceIDLength)
    }

    mutating func syncFileBytes(_ bytes: [UInt8], field: String) throws(ProtocolError) {
        try self.bytes(bytes, field: field, limit: ProtocolLimits.maximumSyncFileLength)
    }

    mutating func syncFiles(_ files: [SyncFile]) throws(ProtocolError) {
        try list(files, field: "files", limit: ProtocolLimits.maximumListCount) { w, f throws(ProtocolError) in
            w.u8(f.kind.rawValue)
            try w.syncID(f.author, field: "author")
            try w.syncFileBytes(f.bytes, field: "file")
        }
    }

    mutating func syncOutcomes(_ outcomes: [SyncFileOutcome]) throws(ProtocolError) {
        try list(outcomes, field: "outcomes", limit: ProtocolLimits.maximumListCount) { w, o throws(ProtocolError) in
            w.u8(o.code.rawValue)
            try w.string(o.message, field: "message", limit: ProtocolLimits.maximumErrorMessageLength)
        }
    }

    mutating func syncOutbox(_ o: SyncOutbox) throws(ProtocolError) {
        try syncID(o.device, field: "device")
        try list(o.records, field: "records", limit: ProtocolLimits.maximumListCount) { w, r throws(ProtocolError) in
            w.u64(r.seq)
            try w.syncFileBytes(r.bytes, field: "record")
        }
        try syncFileBytes(o.head, field: "head")
        try list(o.approvals, field: "approvals", limit: ProtocolLimits.maximumListCount) {
            w, a throws(ProtocolError) in
            try w.syncID(a.device, field: "device")
            try w.syncFileBytes(a.bytes, field: "approval")
        }
        bool(o.more)
        try syncFileBytes(o.snapshot, field: "snapshot")
    }

    mutating func syncStrings(_ strings: [String], field: String) throws(ProtocolError) {
        try list(strings, field: field, limit: ProtocolLimits.maximumListCount) { w, s throws(ProtocolError) in
            try w.string(s, field: field, limit: ProtocolLimits.maximumErrorMessageLength)
        }
    }

    mutating func syncStatus(_ s: SyncStatus) throws(ProtocolError) {
        try syncID(s.device, field: "device")
        try optional(s.awaitingApprovalFrom) { w, id throws(ProtocolError) in try w.syncID(id, field: "approver") }
        u32(s.epoch)
        u64(s.seq)
        try list(s.devices, field: "devices", limit: ProtocolLimits.maximumListCount) { w, d throws(ProtocolError) in
            try w.syncID(d.id, field: "device")
            try w.optional(d.removedAfter) { w, seq in w.u64(seq) }
            w.u64(d.applied)
            w.u64(d.missing)
        }
        u32(s.queued)
        u32(s.conflicts)
        try syncStrings(s.reports, field: "reports")
        // After every field an older client parses: sent only to a client that asked for it.
        guard let detail = s.detail else { return }
        try list(detail.devices, field: "activity", limit: ProtocolLimits.maximumListCount) {
            w, d throws(ProtocolError) in
            w.u64(d.headMillis)
            w.bool(d.dormant)
        }
        u32(detail.expired)
        u32(detail.waiting)
    }

    mutating func syncConflicts(_ conflicts: [SyncConflict]) throws(ProtocolError) {
        try list(conflicts, field: "conflicts", limit: ProtocolLimits.maximumListCount) {
            w, c throws(ProtocolError) in
            try w.fixed(c.item, field: "item", length: ProtocolLimits.syncItemRefLength)
            try w.list(c.versions, field: "versions", limit: ProtocolLimits.maximumListCount) {
                w, v throws(ProtocolError) in
                try w.fixed(v.hash, field: "version", length: ProtocolLimits.syncHashLength)
                try w.syncID(v.author, field: "author")
                w.u64(v.clockMillis)
                w.bool(v.winner)
                w.bool(v.deleted)
                try w.attributes(v.attributes)
            }
        }
    }
}

extension WireReader {
    mutating func syncID(field: String) throws(ProtocolError) -> [UInt8] {
        try fixed(field: field, length: ProtocolLimits.syncDeviceIDLength)
    }

    mutating func syncFileBytes(field: String) throws(ProtocolError) -> [UInt8] {
        try bytes(field: field, limit: ProtocolLimits.maximumSyncFileLength)
    }

    mutating func syncFiles() throws(ProtocolError) -> [SyncFile] {
        try list(field: "files", limit: ProtocolLimits.maximumListCount) { r throws(ProtocolError) in
            let tag = try r.u8()
            guard let kind = SyncFileKind(rawValue: tag) else { throw .unknownTag(field: "kind", value: UInt32(tag)) }
            return SyncFile(
                kind: kind, author: try r.syncID(field: "author"), bytes: try r.syncFileBytes(field: "file"))
        }
    }

    mutating func syncOutcomes() throws(ProtocolError) -> [SyncFileOutcome] {
        try list(field: "outcomes", limit: ProtocolLimits.maximumListCount) { r throws(ProtocolError) in
            let tag = try r.u8()
            guard let code = SyncFileOutcomeCode(rawValue: tag) else {
                throw .unknownTag(field: "outcome", value: UInt32(tag))
            }
            return SyncFileOutcome(
                code: code, message: try r.string(field: "message", limit: ProtocolLimits.maximumErrorMessageLength))
        }
    }

    mutating func syncOutbox() throws(ProtocolError) -> SyncOutbox {
        let device = try syncID(field: "device")
        let records = try list(field: "records", limit: ProtocolLimits.maximumListCount) { r throws(ProtocolError) in
            SyncOutboxRecord(seq: try r.u64(), bytes: try r.syncFileBytes(field: "record"))
        }
        let head = try syncFileBytes(field: "head")
        let approvals = try list(field: "approvals", limit: ProtocolLimits.maximumListCount) {
            r throws(ProtocolError) in
            SyncOutboxApproval(device: try r.syncID(field: "device"), bytes: try r.syncFileBytes(field: "approval"))
        }
        let more = try bool(field: "more")
        return SyncOutbox(
            device: device, records: records, head: head, approvals: approvals, more: more,
            snapshot: try syncFileBytes(field: "snapshot"))
    }

    mutating func syncStrings(field: String) throws(ProtocolError) -> [String] {
        try list(field: field, limit: ProtocolLimits.maximumListCount) { r throws(ProtocolError) in
            try r.string(field: field, limit: ProtocolLimits.maximumErrorMessageLength)
        }
    }

    mutating func syncStatus() throws(ProtocolError) -> SyncStatus {
        let device = try syncID(field: "device")
        let approver = try optional(field: "approver") { r throws(ProtocolError) in try r.syncID(field: "approver") }
        let epoch = try u32()
        let seq = try u64()
        let devices = try list(field: "devices", limit: ProtocolLimits.maximumListCount) { r throws(ProtocolError) in
            SyncDeviceStatus(
                id: try r.syncID(field: "device"),
                removedAfter: try r.optional(field: "removedAfter") { r throws(ProtocolError) in try r.u64() },
                applied: try r.u64(), missing: try r.u64())
        }
        let queued = try u32()
        let conflicts = try u32()
        let reports = try syncStrings(field: "reports")
        var detail: SyncStatusDetail?
        if remaining > 0 {
            let activity = try list(field: "activity", limit: ProtocolLimits.maximumListCount) {
                r throws(ProtocolError) in
                SyncDeviceActivity(headMillis: try r.u64(), dormant: try r.bool(field: "dormant"))
            }
            detail = SyncStatusDetail(devices: activity, expired: try u32(), waiting: try u32())
        }
        return SyncStatus(
            device: device, awaitingApprovalFrom: approver, epoch: epoch, seq: seq, devices: devices,
            queued: queued, conflicts: conflicts, reports: reports, detail: detail)
    }

    mutating func syncConflicts() throws(ProtocolError) -> [SyncConflict] {
        try list(field: "conflicts", limit: ProtocolLimits.maximumListCount) { r throws(ProtocolError) in
            SyncConflict(
                item: try r.fixed(field: "item", length: ProtocolLimits.syncItemRefLength),
                versions: try r.list(field: "versions", limit: ProtocolLimits.maximumListCount) {
                    r throws(ProtocolError) in
                    SyncVersion(
                        hash: try r.fixed(field: "version", length: ProtocolLimits.syncHashLength),
                        author: try r.syncID(field: "author"), clockMillis: try r.u64(),
                        winner: try r.bool(field: "winner"), deleted: try r.bool(field: "deleted"),
                        attributes: try r.attributes())
                })
        }
    }
}
