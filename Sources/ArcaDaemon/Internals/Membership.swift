import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Unix users and groups, from NSS (so LDAP and systemd's dynamic users count too).
/// Only for delivering group grants into members' persistent keyrings, where no
/// process is asking; a request over the socket is decided from the groups its
/// process actually has (`PeerCredentials.groups`, SO_PEERGROUPS), never from here.
enum Membership {
    /// The uids of group `gid`'s members: those listed in the group, and those whose
    /// primary group it is.
    static func members(ofGroup gid: UInt32) -> Set<UInt32> {
        var result = Set<UInt32>()
        // A large group needs a large buffer: grow on ERANGE, up to 16 MiB. The
        // entry points into the buffer, so it is read inside the buffer's scope.
        var size = 1 << 16
        while size <= 1 << 24 {
            var buffer = [CChar](repeating: 0, count: size)
            let rc = buffer.withUnsafeMutableBufferPointer { raw -> Int32 in
                var group = Glibc.group()
                var found: UnsafeMutablePointer<Glibc.group>?
                guard let base = raw.baseAddress else { return EINVAL }
                let rc = getgrgid_r(gid, &group, base, raw.count, &found)
                if rc == 0, found != nil, var member = group.gr_mem {
                    while let name = member.pointee {
                        if let uid = uid(named: String(cString: name)) { result.insert(uid) }
                        member += 1
                    }
                }
                return rc
            }
            guard rc == ERANGE else { break }
            size *= 2
        }
        // getpwent is not reentrant: one scanner at a time.
        passwdScan.withLock { _ in
            setpwent()
            while let entry = getpwent() {
                if entry.pointee.pw_gid == gid { result.insert(entry.pointee.pw_uid) }
            }
            endpwent()
        }
        return result
    }

    static func uid(named name: String) -> UInt32? {
        var buffer = [CChar](repeating: 0, count: 1 << 14)
        return buffer.withUnsafeMutableBufferPointer { raw -> UInt32? in
            var pw = passwd()
            var found: UnsafeMutablePointer<passwd>?
            guard let base = raw.baseAddress, getpwnam_r(name, &pw, base, raw.count, &found) == 0, found != nil else {
                return nil
            }
            return pw.pw_uid
        }
    }

    private static let passwdScan = Mutex(())
}
