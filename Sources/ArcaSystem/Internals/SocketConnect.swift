#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `connect` on a blocking socket, for every kind Arca connects (Unix, loopback TCP), with
/// `EINTR` handled as POSIX specifies rather than by calling `connect` again: an interrupted
/// connect goes on asynchronously, and a second call fails with `EALREADY` while it does (or
/// `EISCONN` once it is done); Linux gives `EALREADY` for TCP once the second call's wait
/// runs out. So after `EINTR` the socket is polled until writable and the outcome read from
/// `SO_ERROR`. The one exception: Linux drops an interrupted Unix-socket connect (the socket
/// is left unconnected, with no error); only then, seen as "writable, no error, no peer", is
/// `connect` called again, which is a first attempt on that socket.
enum SocketConnect {
    /// Connects `fd` to `address`. With `timeoutMilliseconds` (the socket's `SO_SNDTIMEO`, which
    /// bounds the kernel's own wait), a connect that does not complete in time fails with
    /// ``Errno/wouldBlock``, whichever way it ran out, signals included. 0 or nil: no timeout
    /// (as `SO_SNDTIMEO` 0 means to the kernel). The corresponding C function is `connect`.
    static func connect(_ fd: FileDescriptor, to address: inout SocketAddress, timeoutMilliseconds: Int?)
        throws(Errno)
    {
        let timeout = timeoutMilliseconds.flatMap { $0 > 0 ? $0 : nil }
        let deadline = timeout.map { saturatingDeadline(after: $0, from: MonotonicClock.milliseconds()) }
        // Whether SO_SNDTIMEO was cut to the time left, to be set back once connected.
        var shortened = false
        while true {
            let result = nothingOrErrno(retryOnInterrupt: false) {
                address.withSockaddr { Glibc.connect(fd.rawValue, $0, $1) }
            }
            switch result {
            case .success:
                // SO_SNDTIMEO also bounds every later send: the full timeout again.
                if shortened, let timeout { try setSendTimeout(fd, milliseconds: timeout) }
                return
            case .failure(.interrupted):
                if try awaitInterrupted(fd, deadline: deadline) { return }
                // Linux dropped the connect: the next one waits only for the time left, or
                // the kernel would wait a full SO_SNDTIMEO again (twice the timeout in all).
                if let deadline {
                    let left = deadline - MonotonicClock.milliseconds()
                    guard left > 0 else { throw .wouldBlock }
                    try setSendTimeout(fd, milliseconds: left)
                    shortened = true
                }
            case .failure(.inProgress):
                // A blocking TCP connect cut short by SO_SNDTIMEO: Linux reports EINPROGRESS
                // (a Unix socket's, EAGAIN). One code for "timed out", as reads and writes give.
                throw .wouldBlock
            case .failure(let error):
                throw error
            }
        }
    }

    /// `now + milliseconds`, saturated at `Int.max` (a timeout of `Int.max` never ends).
    static func saturatingDeadline(after milliseconds: Int, from now: Int) -> Int {
        let (sum, overflow) = now.addingReportingOverflow(milliseconds)
        return overflow ? Int.max : sum
    }

    /// Sets `SO_SNDTIMEO` alone, which bounds `connect` (and sends).
    /// The corresponding C function is `setsockopt`.
    private static func setSendTimeout(_ fd: FileDescriptor, milliseconds: Int) throws(Errno) {
        var tv = UnixSocket.timeval(milliseconds: milliseconds)
        let size = socklen_t(MemoryLayout<timeval>.size)
        try nothingOrErrno { setsockopt(fd.rawValue, SOL_SOCKET, SO_SNDTIMEO, &tv, size) }.get()
    }

    /// After an interrupted connect: waits until `fd` is writable (or `deadline` passes:
    /// ``Errno/wouldBlock``), then throws the connect's error (`SO_ERROR`), or returns true
    /// when connected and false when no connect is under way (Linux's Unix sockets).
    /// The corresponding C functions are `poll`, `getsockopt(SO_ERROR)` and `getpeername`.
    private static func awaitInterrupted(_ fd: FileDescriptor, deadline: Int?) throws(Errno) -> Bool {
        while true {
            var wait: Int32 = -1
            if let deadline {
                let left = deadline - MonotonicClock.milliseconds()
                guard left > 0 else { throw .wouldBlock }
                wait = Int32(clamping: left)
            }
            // An interrupted poll returns false: wait again for the time left.
            if try fd.poll(for: Int16(POLLOUT), milliseconds: wait) { break }
        }
        var error: CInt = 0
        var size = socklen_t(MemoryLayout<CInt>.size)
        try nothingOrErrno { getsockopt(fd.rawValue, SOL_SOCKET, SO_ERROR, &error, &size) }.get()
        if error != 0 { throw Errno(rawValue: error) }
        switch Result(catching: { () throws(Errno) in try UnixSocket.peerAddress(fd) }) {
        case .success: return true
        case .failure(.notConnected): return false
        case .failure(let error): throw error
        }
    }
}
