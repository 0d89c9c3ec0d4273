import ArcaCrypto
import CArcaPAM
import CPAM

#if canImport(Glibc)
    import Glibc
#endif

/// The ``PAMContext`` over a real `pam_handle_t`. This is the only file of the
/// module that touches libpam's C API and raw pointers.
final class LivePAMContext: PAMContext {
    private let handle: OpaquePointer

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    /// The corresponding C function is `pam_get_item`.
    func item(_ item: PAMTextItem) -> String? {
        let type: Int32
        switch item {
        case .service: type = PAM_SERVICE
        case .user: type = PAM_USER
        case .tty: type = PAM_TTY
        case .remoteHost: type = PAM_RHOST
        case .remoteUser: type = PAM_RUSER
        }
        var value: UnsafeRawPointer?
        guard pam_get_item(handle, type, &value) == PAM_SUCCESS, let value else { return nil }
        return String(validatingCString: value.assumingMemoryBound(to: CChar.self))
    }

    /// Copies the token from libpam's memory into mlocked memory (SecretBytes) directly,
    /// never through a Swift `String`. The corresponding C function is `pam_get_item`.
    func secretItem(_ item: PAMSecretItem) -> SecretBytes? {
        let type: Int32
        switch item {
        case .authToken: type = PAM_AUTHTOK
        case .oldAuthToken: type = PAM_OLDAUTHTOK
        }
        var value: UnsafeRawPointer?
        guard pam_get_item(handle, type, &value) == PAM_SUCCESS, let value else { return nil }
        let length = strlen(value.assumingMemoryBound(to: CChar.self))
        guard length > 0 else { return nil }
        return try? SecretBytes(copying: UnsafeRawBufferPointer(start: value, count: length))
    }

    /// The corresponding C function is `getpwnam_r`, called once per name and handle: the
    /// answer is kept with the handle (`pam_set_data`, ``knownUserName``) for the later steps of
    /// the same transaction (auth, open_session and close_session each need the uid, and
    /// each `getpwnam_r` reads and parses the password database again). Reused only for the
    /// same bytes of `PAM_USER`: a different name, even one equal in Unicode's canonical sense
    /// (Swift's `==`), is looked up again. The answer lives as long as the handle (`pam_end`
    /// releases it): a transaction, or a screen locker's one long-lived handle, where arcad
    /// checks the caller's uid itself.
    func uid(ofUser name: String) -> UInt32? {
        if let known = kept(Self.knownUserName, as: KnownUser.self), known.name.utf8.elementsEqual(name.utf8) {
            return known.uid
        }
        guard let uid = lookUpUID(name) else { return nil }
        _ = keep(KnownUser(name: name, uid: uid), name: Self.knownUserName)
        return uid
    }

    /// The `pam_set_data` name of the last user name looked up in this handle, and its uid.
    static let knownUserName = "arca:user"

    /// `getpwnam_r` into a buffer on the stack (no array: its storage type is built at run
    /// time in a fresh login process), grown while the entry does not fit.
    private func lookUpUID(_ name: String) -> UInt32? {
        var size = max(Int(sysconf(Int32(_SC_GETPW_R_SIZE_MAX))), 1024)
        while size <= 1 << 20 {
            let (rc, uid) = withUnsafeTemporaryAllocation(of: CChar.self, capacity: size) {
                buffer -> (Int32, UInt32?) in
                guard let start = buffer.baseAddress else { return (ENOMEM, nil) }
                var entry = passwd()
                var result: UnsafeMutablePointer<passwd>?
                let rc = getpwnam_r(name, &entry, start, size, &result)
                return (rc, rc == 0 && result != nil ? entry.pw_uid : nil)
            }
            if rc == ERANGE {
                size *= 4
                continue
            }
            return uid
        }
        return nil
    }

    var effectiveUID: UInt32 { geteuid() }

    /// The corresponding C function is `pam_set_data`; its cleanup releases
    /// the box, whose `SecretBytes` zeroes and frees the copy.
    func stash(_ value: SecretBytes, name: String) -> Bool {
        keep(StashBox(value), name: name)
    }

    /// The corresponding C function is `pam_get_data`.
    func stashed(name: String) -> SecretBytes? {
        try? kept(name, as: StashBox.self)?.secret.copy()
    }

    /// Keeps `object` with the handle under `name` (`pam_set_data`), replacing what was there,
    /// whose cleanup runs; the cleanup releases the object (at `pam_end` at the latest). Released
    /// at once when libpam refuses it.
    private func keep(_ object: AnyObject, name: String) -> Bool {
        let box = Unmanaged.passRetained(object).toOpaque()
        let rc = pam_set_data(handle, name, box) { _, data, _ in
            guard let data else { return }
            Unmanaged<AnyObject>.fromOpaque(data).release()
        }
        if rc != PAM_SUCCESS { Unmanaged<AnyObject>.fromOpaque(box).release() }
        return rc == PAM_SUCCESS
    }

    /// What ``keep(_:name:)`` kept under `name`. Each name (`arca:…`, this module's own) only
    /// ever holds one class, so the object is taken as a `T` without a run-time cast (a cast
    /// would look types up by name in a fresh login process).
    private func kept<T: AnyObject>(_ name: String, as type: T.Type) -> T? {
        var value: UnsafeRawPointer?
        guard pam_get_data(handle, name, &value) == PAM_SUCCESS, let value else { return nil }
        return unsafeDowncast(Unmanaged<AnyObject>.fromOpaque(value).takeUnretainedValue(), to: type)
    }

    /// Replacing the data with nothing runs the old cleanup, which zeroes it.
    func removeStash(name: String) {
        var value: UnsafeRawPointer?
        guard pam_get_data(handle, name, &value) == PAM_SUCCESS, value != nil else { return }
        _ = pam_set_data(handle, name, nil, nil)
    }

    /// `pam_syslog` with a `"%s"` format (a `%` in a user name is never a format),
    /// through CArcaPAM's `arca_pam_syslog_text`: no `withVaList`, whose run-time casts
    /// cost a fresh login process more than the log line itself.
    func log(_ priority: LogPriority, _ message: String) {
        let level: Int32
        switch priority {
        case .error: level = LOG_ERR
        case .notice: level = LOG_NOTICE
        case .info: level = LOG_INFO
        case .debug: level = LOG_DEBUG
        }
        message.withCString { arca_pam_syslog_text(handle, level, $0) }
    }
}

/// What `pam_set_data` holds for ``LivePAMContext/knownUserName``: a user name (not secret) and its uid.
private final class KnownUser {
    let name: String
    let uid: UInt32
    init(name: String, uid: UInt32) {
        self.name = name
        self.uid = uid
    }
}

/// What `pam_set_data` holds: a reference to mlocked memory (SecretBytes).
private final class StashBox {
    let secret: SecretBytes
    init(_ secret: SecretBytes) { self.secret = secret }
}
