import ArcaCrypto
import CKeyutils

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One thin wrapper per libkeyutils call, in the manner of swift-system's
/// `system_open`. This is the only file of ArcaKeyring (with
/// `UserKeyringSwitch.swift`) that touches C pointers. Every wrapper retries
/// EINTR through `retryingOnInterrupt` and throws the raw `KeyringErrno`.
enum Keyctl {
    /// Creates or updates a key and links it into `keyring`.
    /// The corresponding C function is `add_key`.
    static func addKey(
        type: String, description: String, payload: UnsafeRawBufferPointer?, keyring: Int32
    ) throws(KeyringErrno) -> Int32 {
        try retryingOnInterrupt {
            add_key(type, description, payload?.baseAddress, payload?.count ?? 0, keyring)
        }
    }

    /// Searches `keyring` and its nested keyrings for a key of `type` and `description`;
    /// links the result into `destination` unless it is 0.
    /// The corresponding C function is `keyctl_search`.
    static func search(keyring: Int32, type: String, description: String, destination: Int32 = 0)
        throws(KeyringErrno) -> Int32
    {
        Int32(truncatingIfNeeded: try retryingOnInterrupt { keyctl_search(keyring, type, description, destination) })
    }

    /// `addKey` with the payload taken from secure storage.
    static func addKey(type: String, description: String, secret: SecretBytes?, keyring: Int32)
        throws(KeyringErrno) -> Int32
    {
        guard let secret else {
            return try addKey(type: type, description: description, payload: nil, keyring: keyring)
        }
        return try secret.withUnsafeBytes { (bytes) throws(KeyringErrno) -> Int32 in
            try addKey(type: type, description: description, payload: bytes, keyring: keyring)
        }
    }

    /// `read` into secure storage; returns the payload's full length.
    static func read(_ key: Int32, into secret: SecretBytes) throws(KeyringErrno) -> Int {
        try secret.withUnsafeMutableBytes { (bytes) throws(KeyringErrno) -> Int in try read(key, into: bytes) }
    }

    /// `update` from secure storage.
    static func update(_ key: Int32, secret: SecretBytes) throws(KeyringErrno) {
        try secret.withUnsafeBytes { (bytes) throws(KeyringErrno) in try update(key, payload: bytes) }
    }

    /// Reads a key's payload into `buffer`; returns the payload's full length, which
    /// may exceed the buffer. The corresponding C function is `keyctl_read`.
    static func read(_ key: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(KeyringErrno) -> Int {
        try retryingOnInterrupt {
            keyctl_read(key, buffer.baseAddress?.assumingMemoryBound(to: CChar.self), buffer.count)
        }
    }

    /// Replaces a key's payload. The corresponding C function is `keyctl_update`.
    static func update(_ key: Int32, payload: UnsafeRawBufferPointer) throws(KeyringErrno) {
        _ = try retryingOnInterrupt { keyctl_update(key, payload.baseAddress, payload.count) }
    }

    /// Revokes a key: later accesses fail with EKEYREVOKED.
    /// The corresponding C function is `keyctl_revoke`.
    static func revoke(_ key: Int32) throws(KeyringErrno) {
        _ = try retryingOnInterrupt { keyctl_revoke(key) }
    }

    /// Invalidates a key: it disappears at once and the garbage collector zeroes
    /// and frees it. The corresponding C function is `keyctl_invalidate`.
    static func invalidate(_ key: Int32) throws(KeyringErrno) {
        _ = try retryingOnInterrupt { keyctl_invalidate(key) }
    }

    /// Removes the link to `key` from `keyring`. The corresponding C function is `keyctl_unlink`.
    static func unlink(_ key: Int32, from keyring: Int32) throws(KeyringErrno) {
        _ = try retryingOnInterrupt { keyctl_unlink(key, keyring) }
    }

    /// Links `key` into `keyring`, displacing a key of the same type and description.
    /// The corresponding C function is `keyctl_link`.
    static func link(_ key: Int32, into keyring: Int32) throws(KeyringErrno) {
        _ = try retryingOnInterrupt { keyctl_link(key, keyring) }
    }

    /// Removes every link from `keyring`. The corresponding C function is `keyctl_clear`.
    static func clear(_ keyring: Int32) throws(KeyringErrno) {
        _ = try retryingOnInterrupt { keyctl_clear(keyring) }
    }

    /// Sets a key's permission mask. The corresponding C function is `keyctl_setperm`.
    static func setPermissions(_ key: Int32, _ permissions: UInt32) throws(KeyringErrno) {
        _ = try retryingOnInterrupt { keyctl_setperm(key, permissions) }
    }

    /// Changes a key's owner and group (`UInt32.max` leaves one unchanged).
    /// The corresponding C function is `keyctl_chown`.
    static func chown(_ key: Int32, uid: UInt32, gid: UInt32) throws(KeyringErrno) {
        _ = try retryingOnInterrupt { keyctl_chown(key, uid, gid) }
    }

    /// Sets a key's expiry in seconds from now (0 clears it).
    /// The corresponding C function is `keyctl_set_timeout`.
    static func setTimeout(_ key: Int32, seconds: UInt32) throws(KeyringErrno) {
        _ = try retryingOnInterrupt { keyctl_set_timeout(key, seconds) }
    }

    /// The key's description record, `type;uid;gid;perm;description`.
    /// The corresponding C function is `keyctl_describe`.
    static func describe(_ key: Int32) throws(KeyringErrno) -> String {
        // A description is at most 4095 bytes; the record adds the type and numbers.
        var buffer = [CChar](repeating: 0, count: 4_352)
        while true {
            let capacity = buffer.count
            let length = try buffer.withUnsafeMutableBufferPointer { (pointer) throws(KeyringErrno) -> Int in
                try retryingOnInterrupt { keyctl_describe(key, pointer.baseAddress, capacity) }
            }
            if length <= capacity {
                let bytes = buffer.prefix(max(0, length - 1)).map { UInt8(bitPattern: $0) }
                return String(decoding: bytes, as: UTF8.self)
            }
            buffer = [CChar](repeating: 0, count: length)
        }
    }

    /// Links `uid`'s persistent keyring (creating it) into `destination` and resets
    /// its expiry. The corresponding C function is `keyctl_get_persistent`.
    static func getPersistent(uid: UInt32, destination: Int32) throws(KeyringErrno) -> Int32 {
        Int32(truncatingIfNeeded: try retryingOnInterrupt { keyctl_get_persistent(uid, destination) })
    }

    /// Joins the named session keyring, or a new anonymous one when `name` is nil.
    /// The corresponding C function is `keyctl_join_session_keyring`.
    static func joinSessionKeyring(named name: String?) throws(KeyringErrno) -> Int32 {
        if let name {
            return try retryingOnInterrupt { keyctl_join_session_keyring(name) }
        }
        return try retryingOnInterrupt { keyctl_join_session_keyring(nil) }
    }

    /// Resolves a special keyring id (`@u`, `@s`…) to its serial, creating the keyring
    /// if `create`. The corresponding C function is `keyctl_get_keyring_ID`.
    static func getKeyringID(_ key: Int32, create: Bool) throws(KeyringErrno) -> Int32 {
        try retryingOnInterrupt { keyctl_get_keyring_ID(key, create ? 1 : 0) }
    }

    /// The serials a keyring links to, in order. Reads with `keyctl_read`.
    static func readKeyring(_ keyring: Int32) throws(KeyringErrno) -> [Int32] {
        var capacity = 64
        while true {
            var serials = [Int32](repeating: 0, count: capacity)
            // Through the buffer pointer: Array's withUnsafeMutableBytes only rethrows untyped.
            let length = try serials.withUnsafeMutableBufferPointer { (pointer) throws(KeyringErrno) -> Int in
                try read(keyring, into: UnsafeMutableRawBufferPointer(pointer))
            }
            let count = length / MemoryLayout<Int32>.size
            if count <= capacity { return Array(serials.prefix(count)) }
            capacity = count + 16
        }
    }

    /// Reads a key's payload into new secure storage: asks the length, allocates
    /// exactly that, reads, and retries if the key grew meanwhile.
    static func readSecret(_ key: Int32) throws(KeyringErrno) -> SecretBytes {
        var length = try read(key, into: UnsafeMutableRawBufferPointer(start: nil, count: 0))
        while true {
            let secret: SecretBytes
            do { secret = try SecretBytes(count: length) } catch { throw KeyringErrno.noMemory }
            let actual = try read(key, into: secret)
            if actual == length { return secret }
            if actual < length {
                do { return try secret.slice(0..<actual) } catch { throw KeyringErrno.noMemory }
            }
            length = actual
        }
    }
}
