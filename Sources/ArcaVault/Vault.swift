import ArcaCrypto

/// One encrypted vault: a single SQLite database holding a header (KDF parameters,
/// the wrapped master key) and the items. See arca-vault(5) for the format.
///
/// A `Vault` is opened without any key; `unlock` loads the class keys (the master
/// key is used and dropped at once), `lock` drops them. It is not thread-safe: one
/// owner (arcad) serialises access. Two processes may open the same file; SQLite's
/// locking and a busy timeout keep it consistent.
public final class Vault {
    /// The database file.
    public let path: String
    /// The random identifier of this vault, bound into every blob's associated data.
    public let vaultID: [UInt8]
    /// The Argon2id parameters of the password key, readable without unlocking, so a
    /// caller (the PAM module) can derive the key itself and pass `unlock(derivedKey:)`.
    public internal(set) var kdfParameters: KDFParameters

    let db: Database
    /// Checkpoints the WAL off the request path (`WALCheckpointer`).
    let checkpointer: WALCheckpointer
    var classKeys: [Accessibility: SecretBytes] = [:]
    var blindIndex: BlindIndex?
    /// The blind-index key, kept beside `blindIndex` so that held keys can be parked.
    var indexKey: SecretBytes?
    /// Reused for unwrapping item keys during queries; wiped after each.
    var itemKeyScratch: SecretBytes?

    /// Secrets larger than this are refused with `errSecParam`: 1 MiB.
    public static let maximumSecretLength = 1 << 20
    /// The schema version this code writes.
    static let schemaVersion = 3
    static let formatName = "arca-vault"

    /// WAL frames (pages) after which a background checkpoint starts: SQLite's own default.
    public static let defaultCheckpointPages = 1000

    private init(
        path: String, db: Database, vaultID: [UInt8], kdfParameters: KDFParameters,
        checkpointPages: Int = Vault.defaultCheckpointPages, checkpointIdleMilliseconds: Int = 5_000
    ) {
        self.path = path
        self.db = db
        self.vaultID = vaultID
        self.kdfParameters = kdfParameters
        // The file the writer's connection has open, if the path still names it (SQLite's
        // own check against the open file); its open fd keeps the inode from being reused.
        let identity = (try? db.hasMoved()) == false ? FileProbe.identity(path: path) : nil
        let checkpointer = WALCheckpointer(
            path: path, identity: identity, threshold: checkpointPages,
            idleMilliseconds: checkpointIdleMilliseconds)
        self.checkpointer = checkpointer
        // Replaces SQLite's auto-checkpoint on this connection (and a probe's hook, when
        // `open` hands its connection on).
        db.onCommitToWAL { [unowned db] frames in checkpointer.committed(frames: frames, writer: db) }
    }

    deinit {
        checkpointer.stop()
    }

    // MARK: Creating and opening

    /// Creates a vault at `path` (which must not exist), protected by `password`.
    /// Argon2id is calibrated to about `targetSeconds` with at least 64 MiB, unless
    /// `kdfParameters` (at least 64 MiB) are given. With `recoveryKey`, the master
    /// key is also wrapped by a fresh recovery key, returned once and never stored.
    /// The vault is returned unlocked (every class, ThisDeviceOnly ones if
    /// `hostSecret` is given).
    public static func create(
        at path: String, password: SecretBytes, kdfParameters: KDFParameters? = nil, targetSeconds: Double = 0.25,
        hostSecret: SecretBytes? = nil, recoveryKey: Bool = false
    ) throws -> (vault: Vault, recoveryKey: RecoveryKey?) {
        if let given = kdfParameters, given.memoryLimit < KDFParameters.memoryFloor {
            throw VaultError.param("Argon2id memory must be at least \(KDFParameters.memoryFloor >> 20) MiB")
        }
        let params = try kdfParameters ?? crypto { try Argon2id.calibrate(targetSeconds: targetSeconds) }
        return try create(
            at: path, password: password, uncheckedParameters: params, hostSecret: hostSecret,
            recoveryKey: recoveryKey)
    }

    /// `create` without the 64 MiB floor, for tests that need a cheap KDF.
    static func create(
        at path: String, password: SecretBytes, uncheckedParameters params: KDFParameters,
        hostSecret: SecretBytes? = nil, recoveryKey wantRecovery: Bool = false
    ) throws -> (vault: Vault, recoveryKey: RecoveryKey?) {
        let passwordKey = try crypto { try Argon2id.deriveKey(password: password, parameters: params) }
        return try create(
            at: path, derivedKey: passwordKey, uncheckedParameters: params, hostSecret: hostSecret,
            recoveryKey: wantRecovery)
    }

    /// Creates a vault from a key already derived with `kdfParameters` (arcad receives
    /// derived keys from the PAM module and the CLI, never passwords). Same result as
    /// `create(at:password:…)`.
    public static func create(
        at path: String, derivedKey: SecretBytes, kdfParameters: KDFParameters, hostSecret: SecretBytes? = nil,
        recoveryKey: Bool = false
    ) throws -> (vault: Vault, recoveryKey: RecoveryKey?) {
        guard kdfParameters.memoryLimit >= KDFParameters.memoryFloor else {
            throw VaultError.param("Argon2id memory must be at least \(KDFParameters.memoryFloor >> 20) MiB")
        }
        do { try kdfParameters.validate() } catch { throw VaultError.param("invalid KDF parameters: \(error)") }
        return try create(
            at: path, derivedKey: derivedKey, uncheckedParameters: kdfParameters,
            hostSecret: hostSecret, recoveryKey: recoveryKey)
    }

    static func create(
        at path: String, derivedKey passwordKey: SecretBytes, uncheckedParameters params: KDFParameters,
        hostSecret: SecretBytes? = nil, recoveryKey wantRecovery: Bool = false
    ) throws -> (vault: Vault, recoveryKey: RecoveryKey?) {
        guard passwordKey.count == Argon2id.keyLength else {
            throw VaultError.param("a derived key is \(Argon2id.keyLength) bytes, got \(passwordKey.count)")
        }
        let master = try crypto { try SecretBytes.random(count: 32) }
        let vaultID = SecureRandom.bytes(count: 16)
        let recovery = wantRecovery ? try crypto { try RecoveryKey.generate() } : nil
        // Created empty with O_EXCL and mode 0600 before SQLite opens it: no window in
        // which the file is readable by others, and no race with a second creator.
        guard FileProbe.createExclusive(path: path) else {
            if FileProbe.exists(path: path) { throw VaultError.alreadyExists(path: path) }
            throw VaultError.storage(path: path, reason: "cannot create the file")
        }
        // A vault that failed half-way is removed, so a retry does not meet a damaged file.
        var created = false
        defer { if !created { FileProbe.remove(vaultFiles: path) } }
        let db = try storage(path) { try Database(path: path, create: true) }
        let vault = Vault(path: path, db: db, vaultID: vaultID, kdfParameters: params)
        try vault.guarded {
            try vault.configureConnection()
            try db.transaction {
                try Schema.createCurrent(db)
                try vault.putHeader("format", .text(formatName))
                try vault.putHeader("vault_id", .blob(vaultID))
                try vault.writePasswordWrap(master: master, passwordKey: passwordKey, parameters: params)
                if let recovery {
                    let wrapped = try crypto {
                        try KeyWrap.wrap(master, with: recovery.key, context: vault.wrapContext("recovery"))
                    }
                    try vault.putHeader("master.recovery", .blob(wrapped))
                }
            }
        }
        created = true
        try vault.loadKeys(master: master, hostSecret: hostSecret, classes: Accessibility.all)
        return (vault, recovery)
    }

    /// Opens an existing vault without unlocking it. A missing file →
    /// `noSuchVault`; a foreign, truncated or corrupted file → `damaged` naming it;
    /// a newer schema → `unsupportedVersion`. Past `checkpointPages` WAL frames, a
    /// thread of the vault's own checkpoints the WAL into the file (`WALCheckpointer`); it
    /// ends after `checkpointIdleMilliseconds` without one.
    public static func open(
        at path: String, checkpointPages: Int = defaultCheckpointPages, checkpointIdleMilliseconds: Int = 5_000
    ) throws -> Vault {
        guard let (header, size) = FileProbe.header(path: path) else {
            if FileProbe.exists(path: path) { throw VaultError.storage(path: path, reason: "cannot read the file") }
            throw VaultError.noSuchVault(path: path)
        }
        try checkFileHeader(header, size: size, path: path)
        let db = try storage(path) { try Database(path: path, create: false) }
        let probe = Vault(
            path: path, db: db, vaultID: [], kdfParameters: KDFParameters(opsLimit: 0, memoryLimit: 0, salt: []))
        return try probe.guarded {
            try probe.configureConnection()
            try Schema.migrate(db, path: path)
            guard try probe.header("format").flatMap({ String(decoding: $0, as: UTF8.self) }) == formatName,
                let vaultID = try probe.header("vault_id"), vaultID.count == 16,
                let params = try probe.storedParameters()
            else { throw VaultError.damaged(path: path, reason: "the vault header is missing or incomplete") }
            return Vault(
                path: path, db: db, vaultID: vaultID, kdfParameters: params, checkpointPages: checkpointPages,
                checkpointIdleMilliseconds: checkpointIdleMilliseconds)
        }
    }

    /// The KDF parameters of the vault at `path`, without unlocking it.
    public static func kdfParameters(at path: String) throws -> KDFParameters {
        try open(at: path).kdfParameters
    }

    /// SQLite's own header says how big the file must be; a shorter file was truncated.
    private static func checkFileHeader(_ header: [UInt8], size: Int, path: String) throws {
        let magic = Array("SQLite format 3\u{0}".utf8)
        guard header.count == 100, Array(header.prefix(16)) == magic else {
            throw VaultError.damaged(
                path: path,
                reason: size < 100
                    ? "the file is truncated or empty"
                    : "not an Arca vault (not an SQLite database)")
        }
        func be32(_ i: Int) -> Int { header[i..<(i + 4)].reduce(0) { $0 << 8 | Int($1) } }
        let rawPageSize = Int(header[16]) << 8 | Int(header[17])
        let pageSize = rawPageSize == 1 ? 65536 : rawPageSize
        let pages = be32(28)
        // The page count is valid only when the "version-valid-for" number equals the change
        // counter, and only without a WAL: a checkpoint killed midway may have written page 1
        // (with the new size) before the later pages, which the WAL still holds.
        let walSize = FileProbe.header(path: path + "-wal")?.size ?? 0
        if walSize == 0, be32(92) == be32(24), pages > 0, pageSize > 0, size < pages * pageSize {
            throw VaultError.damaged(path: path, reason: "the file is truncated (\(size) of \(pages * pageSize) bytes)")
        }
    }

    func configureConnection() throws {
        try db.execute("PRAGMA busy_timeout = 10000")
        try db.execute("PRAGMA journal_mode = WAL")
        try db.execute("PRAGMA synchronous = FULL")
        try db.execute("PRAGMA foreign_keys = OFF")
        // Each add touches one leaf of every index at a random place (the tags are
        // hashes); with SQLite's 2 MiB default those pages are re-read on every add
        // once the vault passes ~50,000 items (4 ms per add at 100,000). 32 MiB is an
        // upper bound, filled only by pages actually touched.
        try db.execute("PRAGMA cache_size = -32768")
        // A write inside a savepoint (every write of a group commit is one) keeps the old
        // pages it changes in a sub-journal; past 64 KiB SQLite spills that to a new file in
        // /var/tmp, created and unlinked per transaction (one add in four at 6,000 items,
        // growing with the trees). In memory it costs at most the pages one batch changed.
        try db.execute("PRAGMA temp_store = MEMORY")
    }

    // MARK: Unlocking and locking

    /// The classes whose keys are loaded.
    public var unlockedClasses: Set<Accessibility> { Set(classKeys.keys) }

    /// Derives the password key (Argon2id with the stored parameters) and unlocks
    /// `classes`. Returns the classes now loaded: ThisDeviceOnly classes load only
    /// with the right `hostSecret` (the first one ever given is remembered).
    /// Wrong password → `authFailed`.
    @discardableResult
    public func unlock(
        password: SecretBytes, hostSecret: SecretBytes? = nil, classes: Set<Accessibility> = Accessibility.all
    ) throws -> Set<Accessibility> {
        // Another process (arcad's predecessor, a PAM password change) may have re-wrapped
        // the master key since this vault was opened: derive with the stored parameters.
        if let current = try guarded({ try storedParameters() }) { kdfParameters = current }
        let key = try crypto { try Argon2id.deriveKey(password: password, parameters: kdfParameters) }
        return try unlock(derivedKey: key, hostSecret: hostSecret, classes: classes)
    }

    /// Unlocks with a key already derived from the password with `kdfParameters`
    /// (the PAM module derives it so that the password never leaves login).
    @discardableResult
    public func unlock(
        derivedKey: SecretBytes, hostSecret: SecretBytes? = nil, classes: Set<Accessibility> = Accessibility.all
    ) throws -> Set<Accessibility> {
        let master = try unwrapMaster(passwordKey: derivedKey)
        return try loadKeys(master: master, hostSecret: hostSecret, classes: classes)
    }

    /// Unlocks with the recovery key. No recovery key enrolled or the wrong one → `authFailed`.
    @discardableResult
    public func unlock(
        recoveryKey: RecoveryKey, hostSecret: SecretBytes? = nil, classes: Set<Accessibility> = Accessibility.all
    ) throws -> Set<Accessibility> {
        let master = try unwrapMaster(recoveryKey: recoveryKey)
        return try loadKeys(master: master, hostSecret: hostSecret, classes: classes)
    }

    /// Drops the keys of `classes`; their items read as locked until the next unlock.
    public func lock(_ classes: Set<Accessibility>) {
        for c in classes { classKeys[c] = nil }
        itemKeyScratch?.wipe()
        if classKeys.isEmpty {
            blindIndex = nil
            indexKey = nil
        }
    }

    /// Drops every key.
    public func lockAll() { lock(Accessibility.all) }

    @discardableResult
    func loadKeys(master: SecretBytes, hostSecret: SecretBytes?, classes: Set<Accessibility>) throws -> Set<
        Accessibility
    > {
        if let hostSecret, hostSecret.count < 16 {
            throw VaultError.param("the host secret must be at least 16 bytes")
        }
        let hostOK = try hostSecret.map { try checkHostSecret($0, master: master) } ?? false
        var keys: [Accessibility: SecretBytes] = [:]
        try crypto {
            for c in classes where !c.isThisDeviceOnly || hostOK {
                keys[c] = try SubkeyDerivation.derive(
                    from: master, label: c.keyLabel, extra: c.isThisDeviceOnly ? hostSecret : nil)
            }
            if !keys.isEmpty, blindIndex == nil {
                let key = try SubkeyDerivation.derive(from: master, label: "arca.index.v1")
                indexKey = key
                blindIndex = BlindIndex(key: key)
            }
        }
        classKeys.merge(keys) { _, new in new }
        return Set(keys.keys)
    }

    /// True if `hostSecret` is the one this vault's ThisDeviceOnly keys were made with;
    /// the first host secret given is recorded (as a keyed hash, not the secret).
    private func checkHostSecret(_ hostSecret: SecretBytes, master: SecretBytes) throws -> Bool {
        let check = try crypto {
            let key = try SubkeyDerivation.derive(from: master, label: "arca.host-check.v1", extra: hostSecret)
            return try KeyedHash.blake2b(Array("arca.host-check.v1".utf8), key: key)
        }
        return try guarded {
            if let stored = try header("host_check") { return stored == check }
            try putHeader("host_check", .blob(check))
            return true
        }
    }

    func unwrapMaster(passwordKey: SecretBytes) throws -> SecretBytes {
        guard let wrapped = try guarded({ try header("master.password") }) else {
            throw VaultError.damaged(path: path, reason: "the wrapped master key is missing")
        }
        return try unwrapOrAuthFailed {
            try KeyWrap.unwrap(wrapped, with: passwordKey, context: wrapContext("password"))
        }
    }

    func unwrapMaster(recoveryKey: RecoveryKey) throws -> SecretBytes {
        guard let wrapped = try guarded({ try header("master.recovery") }) else { throw VaultError.authFailed }
        return try unwrapOrAuthFailed {
            try KeyWrap.unwrap(wrapped, with: recoveryKey.key, context: wrapContext("recovery"))
        }
    }

    private func unwrapOrAuthFailed(_ body: () throws -> SecretBytes) throws -> SecretBytes {
        do { return try body() } catch CryptoError.authenticationFailed { throw VaultError.authFailed } catch {
            throw VaultError.param("cannot unwrap the master key: \(error)")
        }
    }

    func wrapContext(_ purpose: String) -> [UInt8] { Array("arca.master.v1/\(purpose)".utf8) + vaultID }

    func writePasswordWrap(master: SecretBytes, passwordKey: SecretBytes, parameters: KDFParameters) throws {
        let wrapped = try crypto { try KeyWrap.wrap(master, with: passwordKey, context: wrapContext("password")) }
        try putHeader("kdf_ops", .integer(Int64(parameters.opsLimit)))
        try putHeader("kdf_mem", .integer(Int64(parameters.memoryLimit)))
        try putHeader("kdf_salt", .blob(parameters.salt))
        try putHeader("master.password", .blob(wrapped))
        kdfParameters = parameters
    }

    // MARK: Header

    func header(_ name: String) throws -> [UInt8]? {
        let s = try db.statement("SELECT value FROM header WHERE name = ?").bind(.text(name))
        defer { s.finish() }
        return try s.step() ? s.blob(0) : nil
    }

    func putHeader(_ name: String, _ value: SQLValue) throws {
        try db.statement("INSERT OR REPLACE INTO header(name, value) VALUES (?, ?)").bind(.text(name), value).run()
    }

    private func storedParameters() throws -> KDFParameters? {
        guard let ops = try header("kdf_ops").map(Self.integer), let mem = try header("kdf_mem").map(Self.integer),
            let salt = try header("kdf_salt")
        else { return nil }
        let params = KDFParameters(opsLimit: UInt64(max(0, ops)), memoryLimit: Int(mem), salt: salt)
        do { try params.validate() } catch {
            throw VaultError.damaged(path: path, reason: "the KDF parameters in the header are invalid")
        }
        return params
    }

    /// Header integers are stored as SQLite integers; `blob` reads them as text, so parse it.
    private static func integer(_ bytes: [UInt8]) -> Int64 { Int64(String(decoding: bytes, as: UTF8.self)) ?? -1 }

    // MARK: Error mapping

    /// Runs `body`, turning SQLite failures into vault errors that name the file.
    func guarded<R>(_ body: () throws -> R) throws -> R {
        do { return try body() } catch let e as SQLiteError {
            if e.isDamage { throw VaultError.damaged(path: path, reason: e.message) }
            throw VaultError.storage(path: path, reason: e.message)
        }
    }

    private static func storage<R>(_ path: String, _ body: () throws -> R) throws -> R {
        do { return try body() } catch let e as SQLiteError {
            if e.isDamage { throw VaultError.damaged(path: path, reason: e.message) }
            throw VaultError.storage(path: path, reason: e.message)
        }
    }
}

/// Runs crypto code, turning its errors into vault errors (none reach callers raw).
func crypto<R>(_ body: () throws -> R) throws -> R {
    do { return try body() } catch let e as CryptoError {
        throw VaultError.param("cryptographic operation failed: \(e)")
    }
}
