/// Calls `body` until it does not fail with `EINTR` (unless `retryOnInterrupt`
/// is false); a result below zero is a failure whose code is in `errno`. The one
/// place in Arca where EINTR is retried, as swift-system's `valueOrErrno`.
// @inlinable: without it every other module calls the unspecialised generic, and a
// fresh process (`arca get`) pays for instantiating `Result<I, Errno>` and looking up
// the integer witness tables at run time on its first system call.
@inlinable @inline(__always)
public func valueOrErrno<I: FixedWidthInteger>(retryOnInterrupt: Bool = true, _ body: () -> I) -> Result<I, Errno> {
    while true {
        let result = body()
        if result >= 0 { return .success(result) }
        let code = Errno.current
        if retryOnInterrupt && code == .interrupted { continue }
        return .failure(code)
    }
}

/// As ``valueOrErrno(retryOnInterrupt:_:)`` for calls whose success value means
/// nothing (`0` or `-1`).
@inlinable @inline(__always)
public func nothingOrErrno<I: FixedWidthInteger>(
    retryOnInterrupt: Bool = true, _ body: () -> I
) -> Result<Void, Errno> {
    valueOrErrno(retryOnInterrupt: retryOnInterrupt, body).map { _ in () }
}

/// As ``valueOrErrno(retryOnInterrupt:_:)`` for calls that return the negated
/// error number instead of setting `errno` (`sd_bus_*`, raw `syscall` results
/// decoded by the caller): a result below zero is `-errno`.
@inlinable @inline(__always)
public func valueOrNegatedErrno<I: FixedWidthInteger & SignedInteger>(
    retryOnInterrupt: Bool = true, _ body: () -> I
) -> Result<I, Errno> {
    while true {
        let result = body()
        if result >= 0 { return .success(result) }
        let code = Errno(rawValue: CInt(truncatingIfNeeded: -result))
        if retryOnInterrupt && code == .interrupted { continue }
        return .failure(code)
    }
}
