import ArcaSystem
import CSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// An SQLite failure: the primary result code and SQLite's message. Never carries
/// bound values, so no attribute or secret can leak through it.
struct SQLiteError: Error, Equatable {
    /// The extended result code.
    let code: Int32
    /// `sqlite3_errmsg` at the time of the failure.
    let message: String

    /// The primary result code (the low byte of the extended code).
    var primary: Int32 { code & 0xff }
    /// A UNIQUE constraint was violated.
    var isConstraint: Bool { primary == SQLITE_CONSTRAINT }
    /// The file is not a database, or its pages do not parse.
    var isDamage: Bool { primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB || primary == SQLITE_FORMAT }
}

/// SQLite's "copy the bound bytes now" destructor, which has no Swift spelling.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One connection to one database file. This is the only type of ArcaVault that
/// touches SQLite's C API. Prepared statements are cached by their SQL text, so
/// the per-item paths never re-parse SQL.
final class Database {
    private let handle: OpaquePointer
    private var statements: [String: Statement] = [:]
    /// The WAL hook's handler, kept alive as long as SQLite may call it.
    private var walHook: WALHook?

    /// Opens `path`; with `create`, creates it if missing. The corresponding C function is `sqlite3_open_v2`.
    init(path: String, create: Bool) throws {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: message)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
    }

    deinit {
        statements.removeAll()  // finalize before closing
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements without parameters; refused inside `read` (its SQL is not
    /// checked, so it is taken for a write). The corresponding C function is `sqlite3_exec`.
    func execute(_ sql: String) throws {
        if readDepth > 0 { throw Self.writeInsideRead }
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc) }
    }

    /// The cached prepared statement for `sql`, reset and with its bindings cleared.
    /// The corresponding C function is `sqlite3_prepare_v3`.
    func statement(_ sql: String) throws -> Statement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw error(rc) }
        let statement = Statement(stmt, database: self)
        statements[sql] = statement
        return statement
    }

    private var transactionDepth = 0

    /// Runs `body` in an IMMEDIATE transaction (the write lock is taken up front,
    /// so two processes wait on the busy timeout instead of deadlocking), committing
    /// if it returns and rolling back if it throws. Nested calls become savepoints.
    func transaction<R>(_ body: () throws -> R) throws -> R {
        let nested = transactionDepth > 0
        // After SQLITE_FULL, IOERR or NOMEM SQLite may roll the enclosing transaction back by
        // itself; a SAVEPOINT then would open a transaction of its own and RELEASE would commit
        // it at once, so the caller's later writes would land while it believes all of them
        // roll back together. Refuse instead: the enclosing transaction is already gone.
        if nested && !isInTransaction {
            throw SQLiteError(code: SQLITE_ABORT, message: "the enclosing transaction was rolled back")
        }
        if readDepth > 0 { throw Self.writeInsideRead }
        // Prepared once and kept, as every statement: a group-committed add opens and ends
        // three levels, and sqlite3_exec parsed each of them again on every add.
        try statement(nested ? "SAVEPOINT nested" : "BEGIN IMMEDIATE").run()
        transactionDepth += 1
        defer { transactionDepth -= 1 }
        do {
            let result = try body()
            try statement(nested ? "RELEASE nested" : "COMMIT").run()
            return result
        } catch {
            try? execute(nested ? "ROLLBACK TO nested; RELEASE nested" : "ROLLBACK")
            throw error
        }
    }

    /// Depth of the `read` calls running: their bodies may not write.
    fileprivate private(set) var readDepth = 0

    /// What a write inside `read` gets, whichever way it reaches SQLite.
    static let writeInsideRead = SQLiteError(code: SQLITE_READONLY, message: "a write inside a read transaction")

    /// Runs `body`, which only reads, in one DEFERRED transaction: its statements share one
    /// snapshot and one shared lock of the WAL (each statement outside a transaction takes
    /// and drops them itself). Inside an open transaction, `body` just runs in it. The caller
    /// must not wait inside (the snapshot keeps the checkpointer from reusing the WAL).
    ///
    /// `body` may not write, and cannot: a `transaction` or `execute` inside it is refused, and
    /// so is any statement SQLite does not call read-only, before it steps (a write there would
    /// otherwise upgrade the read transaction and be committed with it). All fail with
    /// ``writeInsideRead``; an enclosing write transaction sees the error and rolls back.
    /// Not SQLite's `query_only`: setting a flag pragma expires every prepared statement of
    /// the connection, and each cached one was prepared again after every read.
    func read<R>(_ body: () throws -> R) throws -> R {
        if readDepth > 0 { return try readOnly(body) }
        let begins = !isInTransaction
        if begins { try statement("BEGIN").run() }
        do {
            let result = try readOnly(body)
            if begins { try statement("COMMIT").run() }
            return result
        } catch {
            if begins { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Runs `body` counted in `readDepth`.
    private func readOnly<R>(_ body: () throws -> R) throws -> R {
        readDepth += 1
        defer { readDepth -= 1 }
        return try body()
    }

    /// Whether a transaction is open (SQLite rolls one back by itself after some
    /// errors). The corresponding C function is `sqlite3_get_autocommit`.
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Rows changed by the last statement. The corresponding C function is `sqlite3_changes`.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// The rowid of the last insert. The corresponding C function is `sqlite3_last_insert_rowid`.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Calls `handler` after each commit with the number of frames in the WAL. This
    /// replaces SQLite's own auto-checkpoint (itself a WAL hook), so the connection no
    /// longer checkpoints on its own commits. The handler runs after the commit, with the
    /// write lock released. The corresponding C function is `sqlite3_wal_hook`.
    func onCommitToWAL(_ handler: @escaping (Int) -> Void) {
        let box = WALHook(handler)
        walHook = box
        sqlite3_wal_hook(
            handle,
            { context, _, _, frames in
                guard let context else { return SQLITE_OK }
                Unmanaged<WALHook>.fromOpaque(context).takeUnretainedValue().handler(Int(frames))
                return SQLITE_OK
            }, Unmanaged.passUnretained(box).toOpaque())
    }

    /// A PASSIVE checkpoint: copies as many WAL frames into the database file as no reader
    /// still needs, without waiting for any lock (another checkpoint in progress → BUSY,
    /// returned as nil). Returns the frames in the WAL and how many of them are now in the
    /// file. The corresponding C function is `sqlite3_wal_checkpoint_v2`.
    func checkpointPassive() throws -> (walFrames: Int, checkpointed: Int)? {
        var log: Int32 = 0
        var done: Int32 = 0
        let rc = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &done)
        if rc & 0xff == SQLITE_BUSY || rc & 0xff == SQLITE_LOCKED { return nil }
        guard rc == SQLITE_OK else { throw error(rc) }
        return (Int(log), Int(done))
    }

    /// Whether the file this connection has open is no longer the one at its path (renamed,
    /// unlinked or replaced). The corresponding C function is `sqlite3_file_control` with
    /// `SQLITE_FCNTL_HAS_MOVED`.
    func hasMoved() throws -> Bool {
        var moved: Int32 = 0
        let rc = sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved)
        guard rc == SQLITE_OK else { throw error(rc) }
        return moved != 0
    }

    /// Times the cached statements were prepared again (a schema change, or a flag pragma,
    /// expires them), for tests. The corresponding C function is `sqlite3_stmt_status`.
    var reprepares: Int { statements.values.reduce(0) { $0 + $1.reprepares } }

    fileprivate func error(_ rc: Int32) -> SQLiteError {
        SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)))
    }
}

/// The handler `sqlite3_wal_hook` calls back (through an unretained pointer: its
/// `Database` holds it).
private final class WALHook {
    let handler: (Int) -> Void
    init(_ handler: @escaping (Int) -> Void) { self.handler = handler }
}

/// A prepared statement owned by a `Database`'s cache.
final class Statement {
    private let handle: OpaquePointer
    private unowned let database: Database

    fileprivate init(_ handle: OpaquePointer, database: Database) {
        self.handle = handle
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    fileprivate func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds parameters 1…n in order.
    @discardableResult
    func bind(_ values: SQLValue...) throws -> Statement {
        for (offset, value) in values.enumerated() { try bindAt(offset + 1, value) }
        return self
    }

    /// Binds parameter `position` (1-based). The corresponding C functions are `sqlite3_bind_*`.
    func bindAt(_ position: Int, _ value: SQLValue) throws {
        let index = Int32(position)
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(handle, index)
        case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
        case .text(let s): rc = sqlite3_bind_text(handle, index, s, -1, transient)
        case .blob(let bytes):
            rc = bytes.withUnsafeBytes { buffer in
                // A zero-length blob still binds as a blob, not NULL.
                sqlite3_bind_blob(
                    handle, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count), transient
                )
            }
        }
        guard rc == SQLITE_OK else { throw database.error(rc) }
    }

    /// Ends the current execution so that it holds no read snapshot open.
    /// The corresponding C function is `sqlite3_reset`.
    func finish() { sqlite3_reset(handle) }

    /// Times SQLite prepared this statement again. The corresponding C function is `sqlite3_stmt_status`.
    fileprivate var reprepares: Int { Int(sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_REPREPARE, 0)) }

    /// Advances to the next row; false when done. Inside `database.read`, a statement that may
    /// write is refused before it runs. The corresponding C functions are `sqlite3_step` and
    /// `sqlite3_stmt_readonly`.
    func step() throws -> Bool {
        if database.readDepth > 0 && sqlite3_stmt_readonly(handle) == 0 { throw Database.writeInsideRead }
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let failure = database.error(rc)
            sqlite3_reset(handle)
            throw failure
        }
    }

    /// Steps once and resets, for statements that return no rows.
    func run() throws {
        defer { sqlite3_reset(handle) }
        _ = try step()
    }

    /// Column `index` as an integer.
    func int(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// Column `index` as bytes (empty for NULL).
    func blob(_ index: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let base = sqlite3_column_blob(handle, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// True when column `index` is NULL.
    func isNull(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    /// Column `index` as text (empty for NULL).
    func text(_ index: Int32) -> String {
        guard let cString = sqlite3_column_text(handle, index) else { return "" }
        return String(cString: cString)
    }
}

/// A value bound to a statement parameter.
enum SQLValue {
    case null
    case integer(Int64)
    case text(String)
    case blob([UInt8])
}

/// Which file a path named when it was looked at (device and inode).
struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64
}

/// Reads the first 100 bytes of a file (SQLite's header) without SQLite, to tell a
/// foreign or truncated file from a vault before SQLite is asked to open it.
enum FileProbe {
    /// The header bytes and the file size, or nil if the file cannot be opened.
    static func header(path: String) -> (bytes: [UInt8], size: Int)? {
        guard let fd = try? FileDescriptor.open(path, O_RDONLY) else { return nil }
        defer { fd.close() }
        guard let status = try? fd.status() else { return nil }
        var bytes = [UInt8](repeating: 0, count: 100)
        guard let count = bytes.withUnsafeMutableBytes({ raw in try? fd.read(into: raw) }) else { return nil }
        return (Array(bytes.prefix(count)), status.size)
    }

    /// The device and inode of the file at `path` (symlinks followed), or nil: never by
    /// opening it, which would drop this process's SQLite locks on it when closed.
    static func identity(path: String) -> FileIdentity? {
        guard let status = try? FileDescriptor.status(path: path, followingLinks: true) else { return nil }
        return FileIdentity(device: status.device, inode: status.inode)
    }

    /// True when `path` names an existing file.
    static func exists(path: String) -> Bool { access(path, F_OK) == 0 }

    /// Creates an empty file of mode 0600, failing if it exists. The corresponding C
    /// function is `open` with `O_CREAT | O_EXCL`.
    static func createExclusive(path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }

    /// Removes a database and its WAL and shared-memory files. The corresponding C function is `unlink`.
    static func remove(vaultFiles path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { _ = unlink(path + suffix) }
    }

    /// The calendar time in seconds since 1970. The corresponding C function is `clock_gettime`.
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
