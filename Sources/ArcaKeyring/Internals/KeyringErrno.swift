import ArcaSystem

/// The error number of a failed keyring system call: ArcaSystem's ``Errno``,
/// under the name this module's API has always used.
public typealias KeyringErrno = Errno

/// Calls `body` until it does not fail with `EINTR`; a result below zero is a
/// failure whose code is in `errno`. ArcaSystem's one retry, typed for the
/// keyring wrappers.
@inline(__always)
func retryingOnInterrupt<R: FixedWidthInteger>(_ body: () -> R) throws(KeyringErrno) -> R {
    try valueOrErrno(body).get()
}
