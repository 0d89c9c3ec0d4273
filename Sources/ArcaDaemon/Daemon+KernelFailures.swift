import ArcaProtocol

/// A lock is what leaves the kernel: a class whose keys arcad could not all
/// destroy is reported to the caller (an error reply, `errSecInternalComponent`)
/// and in `status`, and every later lock or status tries again.
extension Daemon {
    /// Tries again to destroy the kernel keys of locked classes whose removal
    /// failed; returns the classes still not removed.
    func retryKernelRemoval(_ state: UserState) -> LockClasses {
        for c in state.kernelNotRemoved where !state.lock.loadedClasses.contains(c) {
            if kernel.remove(uid: state.uid, class: c) {
                state.kernelNotRemoved.remove(c)
                Log.notice("uid \(state.uid): the \(c.rawValue) keys left by a failed lock are now destroyed")
            }
        }
        var classes: LockClasses = []
        for c in state.kernelNotRemoved where !state.lock.loadedClasses.contains(c) {
            classes.insert(c == .whenUnlocked ? .whenUnlocked : .afterFirstUnlock)
        }
        return classes
    }

    /// Throws unless every locked class has left the kernel.
    func requireKernelRemoved(_ state: UserState) throws(HandlerError) {
        let left = retryKernelRemoval(state)
        guard left.isEmpty else {
            let names = [
                left.contains(.whenUnlocked) ? "whenUnlocked" : nil,
                left.contains(.afterFirstUnlock) ? "afterFirstUnlock" : nil,
            ].compactMap { $0 }
            throw HandlerError(
                .internalComponent,
                "lock incomplete: keys of \(names.joined(separator: ", ")) are still in the kernel; see arcad's log")
        }
    }
}
