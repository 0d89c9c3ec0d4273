import CArcaSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An open file descriptor, in swift-system's shape: a value over `CInt` whose
/// methods are the calls Arca makes on it, each retrying `EINTR` and throwing
/// ``Errno``. It does not close itself: the owner calls ``close()``.
public struct FileDescriptor: RawRepresentable, Hashable, Sendable {
    /// The raw C file descriptor.
    public let rawValue: CInt

    /// Wraps a raw file descriptor.
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// Opens `path` close-on-exec. The corresponding C function is `open`.
    public static func open(_ path: String, _ flags: CInt, permissions: mode_t = 0o600) throws(Errno)
        -> FileDescriptor
    {
        FileDescriptor(rawValue: try valueOrErrno { arca_open(path, flags | O_CLOEXEC, permissions) }.get())
    }

    /// Closes the descriptor; `EINTR` is not retried (Linux has closed it anyway).
    /// The corresponding C function is `close`.
    public func close() {
        _ = Glibc.close(rawValue)
    }

    /// Reads at most `buffer.count` bytes; 0 at end of file. The corresponding C function is `read`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try valueOrErrno { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }.get()
    }

    /// Reads at most `buffer.count` bytes at `offset`. The corresponding C function is `pread`.
    public func read(fromAbsoluteOffset offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try valueOrErrno { pread(rawValue, buffer.baseAddress, buffer.count, off_t(offset)) }.get()
    }

    /// Fills `buffer` exactly, however many reads that takes; false at an early end
    /// of file (the bytes read so far stay in `buffer`). The corresponding C function is `read`.
    public func readExactly(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let n = try read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[offset...]))
            if n == 0 { return false }
            offset += n
        }
        return true
    }

    /// Writes at most `bytes.count` bytes. The corresponding C function is `write`.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try valueOrErrno { Glibc.write(rawValue, bytes.baseAddress, bytes.count) }.get()
    }

    /// Writes all of `bytes` (a secret stays in the caller's buffer, never copied).
    /// A write that takes nothing throws EIO rather than looping. The corresponding C
    /// function is `write`.
    public func writeAll(_ bytes: UnsafeRawBufferPointer) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            let written = try write(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            guard written > 0 else { throw .ioError }
            offset += written
        }
    }

    /// Writes all of `bytes` at `offset`; a write that takes nothing throws EIO. The
    /// corresponding C function is `pwrite`.
    public func writeAll(toAbsoluteOffset offset: Int, _ bytes: UnsafeRawBufferPointer) throws(Errno) {
        var done = 0
        while done < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[done...])
            let written = try valueOrErrno { pwrite(rawValue, rest.baseAddress, rest.count, off_t(offset + done)) }
                .get()
            guard written > 0 else { throw .ioError }
            done += written
        }
    }

    /// A new descriptor for the same open file, close-on-exec, numbered `lowest` or above
    /// (3: off the standard streams); the caller closes both. The corresponding C function is
    /// `fcntl(F_DUPFD_CLOEXEC)`.
    public func duplicate(atLeast lowest: Int32 = 3) throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try valueOrErrno { arca_duplicate_cloexec(rawValue, lowest) }.get())
    }

    /// Makes the descriptor non-blocking. The corresponding C function is `fcntl(F_SETFL)`.
    public func setNonBlocking() throws(Errno) {
        _ = try setNonBlocking(true)
    }

    /// Sets or clears `O_NONBLOCK`; returns whether it was set before. The corresponding
    /// C function is `fcntl(F_GETFL, F_SETFL)`.
    @discardableResult
    public func setNonBlocking(_ nonBlocking: Bool) throws(Errno) -> Bool {
        let flags = try valueOrErrno { arca_get_status_flags(rawValue) }.get()
        let wanted = nonBlocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        if wanted != flags { try nothingOrErrno { arca_set_status_flags(rawValue, wanted) }.get() }
        return flags & O_NONBLOCK != 0
    }

    /// Waits until the descriptor is ready for `events` (`POLLIN`, `POLLOUT`) or
    /// `milliseconds` pass (negative: no limit); true when ready, or when an error
    /// or hang-up is pending that the next call reports. An interrupted wait is
    /// reported as not ready, so that the caller recomputes its time left.
    /// The corresponding C function is `poll`.
    public func poll(for events: Int16, milliseconds: Int32) throws(Errno) -> Bool {
        var entry = pollfd(fd: rawValue, events: events, revents: 0)
        switch valueOrErrno(retryOnInterrupt: false, { Glibc.poll(&entry, 1, milliseconds) }) {
        case .success(let n): return n > 0
        case .failure(.interrupted): return false
        case .failure(let e): throw e
        }
    }
}

extension FileDescriptor {
    /// Waits until one of `descriptors` is ready for its events or `milliseconds` pass
    /// (negative: no limit); returns each one's `revents`, in order. An interrupted
    /// wait returns as a timeout would (all zero), so that the caller recomputes its
    /// time left. The corresponding C function is `poll`.
    public static func poll(_ descriptors: [(FileDescriptor, events: Int16)], milliseconds: Int32) throws(Errno)
        -> [Int16]
    {
        var entries = descriptors.map { pollfd(fd: $0.0.rawValue, events: $0.events, revents: 0) }
        let count = nfds_t(entries.count)
        switch valueOrErrno(retryOnInterrupt: false, { Glibc.poll(&entries, count, milliseconds) }) {
        case .success: return entries.map(\.revents)
        case .failure(.interrupted): return entries.map { _ in 0 }
        case .failure(let e): throw e
        }
    }

    /// A pipe, both ends close-on-exec from the start (and non-blocking if asked).
    /// The corresponding C function is `pipe2`.
    public static func pipe(nonBlocking: Bool = false) throws(Errno) -> (read: FileDescriptor, write: FileDescriptor) {
        var ends: (CInt, CInt) = (-1, -1)
        try withUnsafeMutableBytes(of: &ends) { raw throws(Errno) in
            let fds = raw.baseAddress?.assumingMemoryBound(to: CInt.self)
            try nothingOrErrno { arca_pipe_cloexec(fds, nonBlocking ? 1 : 0) }.get()
        }
        return (FileDescriptor(rawValue: ends.0), FileDescriptor(rawValue: ends.1))
    }
}
