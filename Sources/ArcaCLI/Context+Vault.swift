import ArcaCrypto
import ArcaProtocol

/// The vault verbs: init, lock, unlock, status, passwd, recovery.
extension Context {
    /// Reads a password line; on a terminal, asks twice when `confirm`.
    func password(prompt: String, confirm: Bool = false) throws(CLIError) -> SecretBytes {
        let first = try input.line(prompt: prompt)
        guard confirm, input.isTerminal else { return first }
        let second = try input.line(prompt: "again: ")
        guard first == second else { throw .failure(what: "password", why: "the two passwords differ") }
        return first
    }

    /// The vault key derived from `password`, as bytes for a request (wiped by the caller).
    func derive(_ password: SecretBytes, _ parameters: KeyDerivationParameters, what: String) throws(CLIError)
        -> [UInt8]
    {
        let kdf = KDFParameters(
            opsLimit: parameters.opsLimit, memoryLimit: Int(clamping: parameters.memoryLimit), salt: parameters.salt)
        do {
            let key = try Argon2id.deriveKey(password: password, parameters: kdf)
            return key.withUnsafeBytes { Array($0) }
        } catch {
            throw .failure(what: what, why: "key derivation failed: \(error)")
        }
    }

    /// The current vault's KDF parameters; "locked (no vault)" when there is none.
    mutating func vaultParameters(what: String) throws(CLIError) -> KeyDerivationParameters {
        guard case .kdfParameters(let found) = try send(.kdfParameters(uid: uid), what: what), let found else {
            throw .status(.interactionNotAllowed, what: what, detail: "no vault; create one with arca init")
        }
        return found
    }

    /// New parameters: the same cost as `current`, or calibrated when nil; a fresh salt.
    func freshParameters(like current: KeyDerivationParameters?, what: String) throws(CLIError)
        -> KeyDerivationParameters
    {
        let salt = SecureRandom.bytes(count: ProtocolLimits.saltLength)
        if let current {
            return KeyDerivationParameters(opsLimit: current.opsLimit, memoryLimit: current.memoryLimit, salt: salt)
        }
        do {
            let calibrated = try Argon2id.calibrate()
            return KeyDerivationParameters(
                opsLimit: calibrated.opsLimit, memoryLimit: UInt64(calibrated.memoryLimit), salt: calibrated.salt)
        } catch {
            throw .failure(what: what, why: "cannot calibrate the key derivation: \(error)")
        }
    }

    func printRecoveryKey(_ reply: Reply, output: inout Output) {
        guard case .recoveryKey(let key) = reply else { return }
        output.line("recovery key (shown once; keep it somewhere safe):")
        output.standardOutput.append(contentsOf: key)
        output.standardOutput.append(0x0a)
    }

    mutating func initVault(showRecoveryKey: Bool, output: inout Output) throws(CLIError) {
        if case .kdfParameters(let existing) = try send(.kdfParameters(uid: uid), what: "init"), existing != nil {
            throw .status(.duplicateItem, what: "init", detail: "you already have a vault")
        }
        // Two prompts, a calibration and Argon2id follow: longer than arcad waits for a request.
        disconnect()
        let secret = try password(prompt: "new vault password: ", confirm: true)
        let parameters = try freshParameters(like: nil, what: "init")
        var key = try derive(secret, parameters, what: "init")
        defer { SecureWipe.zero(&key) }
        var request = Request.enroll(uid: uid, key: key, parameters: parameters)
        defer { request.wipeSecrets() }
        _ = try send(request, what: "init")
        guard showRecoveryKey else { return }
        // arcad enrolls without a recovery key (the PAM module could not show one);
        // the CLI can, so it makes one now, proving the password with the same key.
        var reply = try send(.rotateRecoveryKey(uid: uid, key: key), what: "init")
        defer { reply.wipeSecrets() }
        printRecoveryKey(reply, output: &output)
    }

    mutating func lock(all: Bool) throws(CLIError) {
        _ = try send(all ? .lockAll : .lock(uid: uid, classes: .whenUnlocked), what: "lock")
    }

    mutating func unlock(_ source: SecretSource, output: inout Output) throws(CLIError) {
        let secret: SecretBytes
        switch source {
        case .standardInput: secret = try password(prompt: "vault password: ")
        case .commandLine: secret = try readSecret(source, prompt: "", output: &output)
        }
        var bytes = secret.withUnsafeBytes { Array($0) }
        defer { SecureWipe.zero(&bytes) }
        var request = Request.unlockWithPassword(uid: uid, password: bytes)
        defer { request.wipeSecrets() }
        _ = try send(request, what: "unlock")
    }

    mutating func status(json: Bool, user: UInt32?, output: inout Output) throws(CLIError) {
        guard case .status(let status) = try send(.status(uid: user), what: "status") else {
            throw .failure(what: "status", why: "unexpected reply from arcad")
        }
        let wu = status.unlocked.contains(.whenUnlocked)
        let afu = status.unlocked.contains(.afterFirstUnlock)
        if json {
            var writer = JSONWriter()
            writer.beginObject()
            writer.key("uid")
            writer.number(status.uid)
            writer.key("hasVault")
            writer.bool(status.hasVault)
            writer.key("unlocked")
            writer.beginArray()
            if wu { writer.string("when-unlocked") }
            if afu { writer.string("after-first-unlock") }
            writer.endArray()
            writer.key("sessionCount")
            writer.number(status.sessionCount)
            writer.key("passwordOutOfSync")
            writer.bool(status.passwordOutOfSync)
            writer.key("itemsNotInKernel")
            writer.number(status.itemsNotInKernel)
            writer.key("hasRecoveryKey")
            writer.bool(status.hasRecoveryKey)
            writer.key("lockIncomplete")
            writer.beginArray()
            if status.lockIncomplete.contains(.whenUnlocked) { writer.string("when-unlocked") }
            if status.lockIncomplete.contains(.afterFirstUnlock) { writer.string("after-first-unlock") }
            writer.endArray()
            writer.endObject()
            writer.flush(into: &output)
            return
        }
        output.line("uid: \(status.uid)")
        output.line("vault: " + (status.hasVault ? "yes" : "no"))
        // A lock that could not destroy every kernel key is not shown as locked.
        let incomplete = "LOCK INCOMPLETE (secrets may still be in the kernel; see arcad's log)"
        func state(_ unlocked: Bool, _ c: LockClasses) -> String {
            unlocked ? "unlocked" : status.lockIncomplete.contains(c) ? incomplete : "locked"
        }
        output.line("when-unlocked: " + state(wu, .whenUnlocked))
        output.line("after-first-unlock: " + state(afu, .afterFirstUnlock))
        output.line("sessions: \(status.sessionCount)")
        output.line("password in sync: " + (status.passwordOutOfSync ? "no (run arca passwd --resync)" : "yes"))
        output.line("items not in kernel: \(status.itemsNotInKernel)")
        output.line("recovery key: " + (status.hasRecoveryKey ? "yes" : "no"))
    }

    mutating func passwd(resync: Bool, recover: Bool, output: inout Output) throws(CLIError) {
        let current = try vaultParameters(what: "passwd")
        // Prompts and two key derivations follow: longer than arcad waits for a request.
        disconnect()
        if recover {
            let recoveryKey = try input.line(prompt: "recovery key: ", limit: ProtocolLimits.maximumRecoveryKeyLength)
            let new = try password(prompt: "new password: ", confirm: true)
            let parameters = try freshParameters(like: current, what: "passwd")
            var newKey = try derive(new, parameters, what: "passwd")
            defer { SecureWipe.zero(&newKey) }
            var text = recoveryKey.withUnsafeBytes { Array($0) }
            defer { SecureWipe.zero(&text) }
            var request = Request.recover(uid: uid, recoveryKey: text, newKey: newKey, parameters: parameters)
            defer { request.wipeSecrets() }
            _ = try send(request, what: "passwd")
            return
        }
        let old = try password(prompt: resync ? "previous password (the vault's): " : "current password: ")
        let new = try password(
            prompt: resync ? "current login password: " : "new password: ", confirm: !resync)
        var oldKey = try derive(old, current, what: "passwd")
        defer { SecureWipe.zero(&oldKey) }
        let parameters = try freshParameters(like: current, what: "passwd")
        var newKey = try derive(new, parameters, what: "passwd")
        defer { SecureWipe.zero(&newKey) }
        var request = Request.changePassword(uid: uid, oldKey: oldKey, newKey: newKey, parameters: parameters)
        defer { request.wipeSecrets() }
        _ = try send(request, what: "passwd")
    }

    mutating func recovery(rotate: Bool, json: Bool, output: inout Output) throws(CLIError) {
        guard rotate else {
            guard case .status(let status) = try send(.status(uid: nil), what: "recovery") else {
                throw .failure(what: "recovery", why: "unexpected reply from arcad")
            }
            if json {
                var writer = JSONWriter()
                writer.beginObject()
                writer.key("hasRecoveryKey")
                writer.bool(status.hasRecoveryKey)
                writer.endObject()
                writer.flush(into: &output)
            } else {
                output.line("recovery key: " + (status.hasRecoveryKey ? "yes" : "no"))
            }
            return
        }
        let current = try vaultParameters(what: "recovery")
        // A prompt and a key derivation follow: longer than arcad waits for a request.
        disconnect()
        let secret = try password(prompt: "vault password: ")
        var key = try derive(secret, current, what: "recovery")
        defer { SecureWipe.zero(&key) }
        var request = Request.rotateRecoveryKey(uid: uid, key: key)
        defer { request.wipeSecrets() }
        var reply = try send(request, what: "recovery")
        defer { reply.wipeSecrets() }
        if json, case .recoveryKey(let text) = reply {
            var writer = JSONWriter()
            writer.beginObject()
            writer.key("recoveryKey")
            writer.string(utf8: text)
            writer.endObject()
            writer.flush(into: &output)
        } else {
            printRecoveryKey(reply, output: &output)
        }
    }
}
