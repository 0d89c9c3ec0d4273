// libFuzzer entry point for the ArcaProtocol decoder. Built by fuzz/run.sh
// in one module with the ArcaProtocol sources (no SwiftPM target), so it can
// also check internal invariants.

/// Decodes `data` as a request and as a reply. Beyond "never crashes", it
/// checks that scan and decode agree and that anything accepted re-encodes to
/// a frame that decodes to an equal message; a violation traps, which is
/// what libFuzzer reports.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProtocolDecoder(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let scan = Frame.scan(bytes)
    check(Frame.decode(bytes, as: Request.self), scan: scan) { (message: Request, id) throws(ProtocolError) in
        try Frame.encode(message, requestID: id)
    } decode: {
        Frame.decode($0, as: Request.self)
    }
    check(Frame.decode(bytes, as: Reply.self), scan: scan) { (message: Reply, id) throws(ProtocolError) in
        try Frame.encode(message, requestID: id)
    } decode: {
        Frame.decode($0, as: Reply.self)
    }
    return 0
}

private func check<Message: Equatable>(
    _ result: FrameDecodeResult<Message>, scan: FrameScan,
    encode: (Message, UInt32) throws(ProtocolError) -> [UInt8],
    decode: ([UInt8]) -> FrameDecodeResult<Message>
) {
    switch result {
    case .needMore(let n):
        guard scan == .needMore(n), n > 0 else { fatalError("scan \(scan) disagrees with needMore(\(n))") }
    case .invalid:
        // A header-level error must be seen by scan too; body errors only by decode.
        if case .needMore = scan { fatalError("decode failed where scan wants more bytes") }
    case .complete(let frame):
        guard scan == .complete(length: frame.length) else {
            fatalError("scan \(scan) disagrees with a complete frame")
        }
        let again: [UInt8]
        do { again = try encode(frame.message, frame.requestID) } catch {
            fatalError("a decoded message does not encode: \(error)")
        }
        guard case .complete(let second) = decode(again), second.message == frame.message,
            second.requestID == frame.requestID, second.length == again.count
        else { fatalError("re-encoded message does not decode to an equal value") }
    }
}
