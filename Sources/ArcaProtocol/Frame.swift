/// The arcad socket protocol: framing, encoding and strict decoding of every
/// ``Request`` and ``Reply``.
///
/// Clients talk to arcad over a Unix stream socket (`/run/arca/arcad.sock`).
/// Each message is one *frame*: a fixed 16-byte header followed by a body of
/// at most ``ProtocolLimits/maximumBodyLength`` bytes. A client sends a
/// request frame and reads one reply frame carrying the same request id.
/// Everything here is pure Swift (no Foundation, no I/O), so the PAM module,
/// the CLI, the library and the daemon share it.
///
/// Decoding is strict and total: any input yields either a message or one
/// ``ProtocolError``, never a crash, and nothing is allocated beyond the
/// limits. The daemon closes a connection on any `ProtocolError`.
///
/// - ``encode(_:requestID:)-(Request,_)`` validates every limit the decoder
///   checks, so whatever encodes also decodes, to an equal value.
/// - ``scan(_:)`` tells a non-blocking reader how many more bytes it needs,
///   or the length of the complete frame at the front of its buffer.
/// - ``decode(_:as:)-(_,Request.Type)`` decodes the frame at the front of a
///   buffer.
///
/// Secrets: the codec copies each secret field exactly once (from the frame
/// buffer into the decoded message, or from the message into the frame) and
/// never through a `String`. The encoder reserves the exact frame size first so
/// the output never reallocates. The caller wipes the frame buffer after use
/// with ``SecureWipe/zero(_:)``, and moves decoded secrets into `SecretBytes`
/// (or calls ``Request/wipeSecrets()`` / ``Reply/wipeSecrets()``).
///
/// ## Wire format
///
/// ```text
/// All integers are big-endian (network order).
///
/// frame   = header body
/// header  = magic:4 "ARCA" (41 52 43 41)
///           version:u16    1
///           kind:u16       message kind, see below; replies have bit 15 set
///           request-id:u32 chosen by the client, echoed in the reply
///           length:u32     body length, <= 2 MiB - 16
///
/// u8 u16 u32 u64 i64      fixed-width integers (i64 two's complement)
/// bool    = u8, 0 or 1 (anything else is an error)
/// bytes   = len:u32, len bytes        (each field has its own maximum)
/// string  = len:u32, len bytes of UTF-8 (validated)
/// key     = bytes of exactly 32 (password-derived vault key)
/// opt<T>  = u8 0 (absent) | u8 1, T
/// list<T> = count:u32, count × T
/// kdf     = ops:u64, memory:u64, salt:bytes(exactly 16)
/// vault   = u8 1, uid:u32 (a user's vault) | u8 2 (the system vault)
/// classes = u8 bit set: 1 whenUnlocked, 2 afterFirstUnlock (other bits: error)
/// attrs   = count:u32 (<= 22), count × (tag:u16, type:u8, value), tags
///           ascending when encoded, no duplicates, type fixed by the tag:
///           type 1 string (<= 16 KiB)  2 bytes (<= 64 KiB)  3 u32  4 bool
///                5 date: i64 microseconds since the Unix epoch
///                6 item class: u8 (1 genp, 2 inet)
///                7 accessibility: u8 (1 whenUnlocked, 2 afterFirstUnlock,
///                  3 whenUnlockedThisDeviceOnly, 4 afterFirstUnlockThisDeviceOnly,
///                  5 whenPasscodeSetThisDeviceOnly)
///           tags: 1 class, 2 service, 3 account, 4 label, 5 description,
///                 6 comment, 7 generic (bytes), 8 creator (u32), 9 type (u32),
///                 10 isInvisible, 11 isNegative, 12 creationDate,
///                 13 modificationDate, 14 server, 15 protocol, 16 port (u32),
///                 17 path, 18 securityDomain, 19 authenticationType,
///                 20 accessGroup, 21 synchronizable (bool), 22 accessible
/// query   = class:u8, attrs, persistentRef:opt<bytes(<= 64)>,
///           limit:(u8 1 one | u8 2 all | u8 3, n:u32 >= 1),
///           return:u8 bit set (1 data, 2 attributes, 4 persistentRef),
///           caseInsensitive:bool, synchronizableAny:bool
/// name    = string (<= 1024)
/// principal  = u8 1, uid:u32 | u8 2, gid:u32 | u8 3, unit:name, credential:name
/// principals = list<principal> (<= 65536)
///
/// Requests (kind: body)
///   0x0001 status              uid:opt<u32> (absent: the caller's own)
///   0x0002 kdfParameters       uid:u32
///   0x0003 unlock              uid:u32, key
///   0x0004 enroll              uid:u32, key, kdf
///   0x0005 openSession         uid:u32, token:bytes(<= 256), service:name,
///                              tty:opt<name>, rhost:opt<name>, ruser:opt<name>
///   0x0006 closeSession        uid:u32, token:bytes(<= 256)
///   0x0007 lock                uid:u32, classes
///   0x0008 lockAll             (empty)
///   0x0009 unlockWithPassword  uid:u32, password:bytes(<= 4096)
///   0x000A add                 vault, class:u8, attrs, secret:bytes(<= 1 MiB), return:u8
///   0x000B copyMatching        vault, query
///   0x000C update              vault, query, attrs, secret:opt<bytes(<= 1 MiB)>
///   0x000D delete              vault, query
///   0x000E changePassword      uid:u32, oldKey:key, newKey:key, kdf
///   0x000F passwordReset       uid:u32, newKey:key, kdf
///   0x0010 recover             uid:u32, recoveryKey:bytes(<= 256), newKey:key, kdf
///   0x0011 rotateRecoveryKey   uid:u32, key
///   0x0012 listSessions        (empty)
///   0x0013 grant               query, principals (root; system vault)
///   0x0014 revokeGrant         query, principals (empty: all) (root; system vault)
///   0x0015 listGrants          (empty) (root)
///   0x0016 loginUnlock         uid:u32, key (root)
///   0x0017 confirmCandidate    uid:u32, candidate:bytes(exactly 32),
///                              session:bytes(<= 256) (root)
///   0x0042 loginUnlockDerived  uid:u32, key, kdf (root; the parameters key was
///                              derived with, from the published copy)
/// Replies (add → items; copyMatching → items; enroll, rotateRecoveryKey →
/// recoveryKey; loginUnlock → ok or candidate; loginUnlockDerived → ok,
/// candidate or staleParameters; status, kdfParameters,
/// listSessions, listGrants → their own; the others → ok; any request may get
/// error)
///   0x8000 ok                  (empty)
///   0x8001 error               status:u32 (an OSStatus as two's complement,
///                              never 0), message:string(<= 4096)
///   0x8002 status              uid:u32, hasVault:bool, unlocked:classes,
///                              sessions:u32, passwordOutOfSync:bool,
///                              itemsNotInKernel:u32, hasRecoveryKey:bool,
///                              lockIncomplete:classes
///   0x8003 kdfParameters       opt<kdf> (absent: no vault)
///   0x8004 items               list<attrs, data:opt<bytes(<= 1 MiB)>,
///                              persistentRef:opt<bytes(<= 64)>> (<= 65536)
///   0x8005 recoveryKey         bytes(<= 256), ASCII text
///   0x8006 sessions            list<id:u64, uid:u32, service:name,
///                              tty:opt<name>, rhost:opt<name>, ruser:opt<name>,
///                              openedAt:i64 µs, locked:bool> (<= 65536)
///   0x8007 grants              list<service:opt<string>, account:opt<string>,
///                              label:opt<string>, principals> (<= 65536)
///   0x8008 candidate           token:bytes(exactly 32): the key of a
///                              loginUnlock did not open the vault
///   0x802C staleParameters     kdf: the vault's, when loginUnlockDerived's
///                              were not (derive again)
///
/// A frame is rejected (and the connection closed) on: bad magic, another
/// version, an unknown kind or one of the wrong direction, a body length over
/// the limit, a field running past the body, bytes left after the last field,
/// a field or list over its limit, a fixed-size field of another size,
/// invalid UTF-8 in a string, an unknown tag / type / flag bit / bool value,
/// a duplicate attribute, a value of the wrong type for its attribute, a
/// match limit of 0, or an error reply with status 0.
/// ```
public enum Frame {
    /// The four bytes every frame starts with: `ARCA`.
    public static let magic: [UInt8] = [0x41, 0x52, 0x43, 0x41]

    /// Encodes a request as one complete frame.
    ///
    /// - Throws: the ``ProtocolError`` the decoder would raise for a field over
    ///   its limit, of the wrong size or type, or a frame over the maximum.
    public static func encode(_ request: Request, requestID: UInt32) throws(ProtocolError) -> [UInt8] {
        try encode(kind: request.kind, requestID: requestID) { w throws(ProtocolError) in try request.encodeBody(&w) }
    }

    /// Encodes a reply as one complete frame; see ``encode(_:requestID:)-(Request,_)``.
    public static func encode(_ reply: Reply, requestID: UInt32) throws(ProtocolError) -> [UInt8] {
        try encode(kind: reply.kind, requestID: requestID) { w throws(ProtocolError) in try reply.encodeBody(&w) }
    }

    /// Inspects the front of a receive buffer: how many more bytes a frame
    /// needs, the length of a complete frame there, or why it can never be
    /// one. Checks magic, version, kind and length as soon as their bytes
    /// arrive, so garbage is refused after at most 16 bytes.
    public static func scan(_ buffer: ArraySlice<UInt8>) -> FrameScan {
        switch header(buffer) {
        case .needMore(let n): return .needMore(n)
        case .invalid(let error): return .invalid(error)
        case .header(let header):
            let total = ProtocolLimits.headerLength + header.bodyLength
            return buffer.count < total ? .needMore(total - buffer.count) : .complete(length: total)
        }
    }

    /// Inspects the front of a receive buffer; see ``scan(_:)-(ArraySlice<UInt8>)``.
    public static func scan(_ buffer: [UInt8]) -> FrameScan { scan(buffer[...]) }

    /// Decodes the request frame at the front of `buffer`. Bytes after that
    /// frame are left alone (they belong to the next one).
    public static func decode(_ buffer: ArraySlice<UInt8>, as type: Request.Type) -> FrameDecodeResult<Request> {
        decode(buffer) { kind, r throws(ProtocolError) in try Request.decodeBody(kind: kind, &r) }
    }

    /// Decodes the request frame at the front of `buffer`.
    public static func decode(_ buffer: [UInt8], as type: Request.Type) -> FrameDecodeResult<Request> {
        decode(buffer[...], as: type)
    }

    /// Decodes the reply frame at the front of `buffer`. Bytes after that
    /// frame are left alone (they belong to the next one).
    public static func decode(_ buffer: ArraySlice<UInt8>, as type: Reply.Type) -> FrameDecodeResult<Reply> {
        decode(buffer) { kind, r throws(ProtocolError) in try Reply.decodeBody(kind: kind, &r) }
    }

    /// Decodes the reply frame at the front of `buffer`.
    public static func decode(_ buffer: [UInt8], as type: Reply.Type) -> FrameDecodeResult<Reply> {
        decode(buffer[...], as: type)
    }

    // MARK: - Internals

    private struct Header {
        var kind: MessageKind
        var requestID: UInt32
        var bodyLength: Int
    }

    private enum HeaderScan {
        case needMore(Int)
        case invalid(ProtocolError)
        case header(Header)
    }

    private static func header(_ buffer: ArraySlice<UInt8>) -> HeaderScan {
        let available = buffer.count
        let base = buffer.startIndex
        let headerLength = ProtocolLimits.headerLength
        func u16(_ at: Int) -> UInt16 { UInt16(buffer[base + at]) << 8 | UInt16(buffer[base + at + 1]) }
        func u32(_ at: Int) -> UInt32 { UInt32(u16(at)) << 16 | UInt32(u16(at + 2)) }

        for i in 0..<min(magic.count, available) where buffer[base + i] != magic[i] { return .invalid(.badMagic) }
        guard available >= 6 else { return .needMore(headerLength - available) }
        let version = u16(4)
        guard version == ProtocolLimits.version else { return .invalid(.unsupportedVersion(version)) }
        guard available >= 8 else { return .needMore(headerLength - available) }
        guard let kind = MessageKind(rawValue: u16(6)) else { return .invalid(.unknownKind(u16(6))) }
        guard available >= headerLength else { return .needMore(headerLength - available) }
        let length = Int(u32(12))
        guard length <= ProtocolLimits.maximumBodyLength else {
            return .invalid(.frameTooLarge(length: length, limit: ProtocolLimits.maximumBodyLength))
        }
        return .header(Header(kind: kind, requestID: u32(8), bodyLength: length))
    }

    private static func decode<Message>(
        _ buffer: ArraySlice<UInt8>, body decodeBody: (MessageKind, inout WireReader) throws(ProtocolError) -> Message
    ) -> FrameDecodeResult<Message> {
        let header: Header
        switch Frame.header(buffer) {
        case .needMore(let n): return .needMore(n)
        case .invalid(let error): return .invalid(error)
        case .header(let h): header = h
        }
        let total = ProtocolLimits.headerLength + header.bodyLength
        guard buffer.count >= total else { return .needMore(total - buffer.count) }
        let bodyStart = buffer.startIndex + ProtocolLimits.headerLength
        var reader = WireReader(buffer[bodyStart..<buffer.startIndex + total])
        do {
            let message = try decodeBody(header.kind, &reader)
            try reader.finish()
            return .complete(DecodedFrame(requestID: header.requestID, message: message, length: total))
        } catch {
            return .invalid(error)
        }
    }

    private static func encode(
        kind: MessageKind, requestID: UInt32, body: (inout WireWriter) throws(ProtocolError) -> Void
    ) throws(ProtocolError) -> [UInt8] {
        var measurer = WireWriter.measurer()
        try body(&measurer)
        guard measurer.count <= ProtocolLimits.maximumBodyLength else {
            throw .frameTooLarge(length: measurer.count, limit: ProtocolLimits.maximumBodyLength)
        }
        var writer = WireWriter.writer(capacity: ProtocolLimits.headerLength + measurer.count)
        writer.raw(magic)
        writer.u16(ProtocolLimits.version)
        writer.u16(kind.rawValue)
        writer.u32(requestID)
        writer.u32(UInt32(measurer.count))
        try body(&writer)
        return writer.bytes
    }
}

/// What the front of a receive buffer holds.
public enum FrameScan: Sendable, Hashable {
    /// Not yet a whole frame: read at least this many more bytes.
    case needMore(Int)
    /// A whole frame of `length` bytes (header included) is there.
    case complete(length: Int)
    /// These bytes can never become a valid frame.
    case invalid(ProtocolError)
}

/// A decoded frame.
public struct DecodedFrame<Message> {
    /// The request id from the header.
    public var requestID: UInt32
    /// The message.
    public var message: Message
    /// Bytes the frame took at the front of the buffer (header included).
    public var length: Int
}

extension DecodedFrame: Sendable where Message: Sendable {}
extension DecodedFrame: Equatable where Message: Equatable {}
extension DecodedFrame: Hashable where Message: Hashable {}

/// The outcome of decoding the front of a buffer.
public enum FrameDecodeResult<Message> {
    /// Not yet a whole frame: read at least this many more bytes.
    case needMore(Int)
    /// One whole, valid frame.
    case complete(DecodedFrame<Message>)
    /// Malformed: close the connection.
    case invalid(ProtocolError)
}

extension FrameDecodeResult: Sendable where Message: Sendable {}
extension FrameDecodeResult: Equatable where Message: Equatable {}
extension FrameDecodeResult: Hashable where Message: Hashable {}
