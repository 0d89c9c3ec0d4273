import ArcaCrypto
import ArcaKeyring
import ArcaThreads
import Synchronization

/// What a connection thread got from `accept`.
enum AcceptEvent<Connection> {
    /// A connection, admitted (counted against its uid's limit): serve it or refuse it.
    case connection(Connection)
    /// Nothing came within the idle time.
    case idle
    /// Nothing this time (a refused connection, a failed accept): accept again.
    case nothing
    /// The server stopped.
    case stopped
}

/// Where arcad's connection threads get their connections: the listening socket.
protocol ConnectionSource: Sendable {
    associatedtype Connection: Sendable
    /// Blocks in `accept(2)` until a connection arrives, the idle time passes or the server stops.
    func accept() -> AcceptEvent<Connection>
    /// Converses on `connection` until it ends, then closes it and releases its count.
    func serve(_ connection: Connection)
    /// No thread could be started for `connection`: close it and release its count.
    func refuse(_ connection: Connection, because error: any Error)
}

/// The threads that serve arcad's connections, one connection per thread at a time.
///
/// Every thread without a connection waits in `accept(2)` on the listening socket, and the
/// kernel wakes exactly one of them per connection (an exclusive wait): the thread the
/// kernel woke reads the request itself. Handing a connection from one accepting thread to
/// a serving one cost a second thread wake-up per connection, three per login, each a
/// sleeping CPU's wake-up on a quiet machine (bench/pam/timeline.sh).
///
/// At least one thread is accepting at any time: the thread that takes a connection when
/// it is the only one accepting hands that connection to a new thread and goes on
/// accepting, so a burst of connections is accepted as fast as before and no connection
/// waits behind another or in the backlog for a thread to start (ArcadConnectionTests'
/// trickling clients). A thread that finished a connection accepts again while fewer than
/// `maxIdle` + 1 do; an accepting thread that saw no connection within the idle time
/// (the listener's receive timeout) exits unless it is the last one.
///
/// Why a waiting thread is harmless: it holds no lock, no connection and no closure
/// of the last one; its thread keyring was cleared after the last connection (a key
/// left there would be possessed by the next); its used stack was zeroed or handed
/// back to the kernel (as glibc does when a thread exits); the server wiped the
/// request and reply buffers of its last connection. A thread whose keyring or stack
/// cannot be cleared exits instead of waiting.
final class ConnectionWorkers: Sendable {
    private struct Counts {
        var accepting = 0
        var started = 0
        var exited = 0
    }
    private let counts = Mutex(Counts())
    /// How many threads that finished a connection may wait in `accept` besides one.
    let maxIdle: Int

    init(maxIdle: Int = 4) {
        self.maxIdle = maxIdle
    }

    /// Threads started so far (tests: a reused thread starts none).
    var threadsStarted: Int { counts.withLock { $0.started } }

    /// Threads that have stopped taking connections (tests: started − exited are alive).
    var threadsExited: Int { counts.withLock { $0.exited } }

    /// Threads waiting in `accept` now.
    var threadsAccepting: Int { counts.withLock { $0.accepting } }

    /// Starts the first accepting thread.
    func start<Source: ConnectionSource>(_ source: Source) throws {
        try startThread(source, first: nil)
    }

    private func startThread<Source: ConnectionSource>(_ source: Source, first: Source.Connection?) throws {
        counts.withLock { $0.started += 1 }
        // The source travels with the thread: the pool keeps no reference to the server.
        do {
            try Threads.detach { [self] in work(source, first: first) }
        } catch {
            counts.withLock { $0.started -= 1 }
            throw error
        }
    }

    private func work<Source: ConnectionSource>(_ source: Source, first: Source.Connection?) {
        var connection = first
        while true {
            if let current = connection {
                connection = nil
                source.serve(current)
                // Nothing of the last connection waits with the thread: not a key in the
                // thread keyring, not what its frames left on the stack.
                guard Self.clearThreadKeyring(), (try? UsedStack.clear()) != nil else { break }
            }
            guard
                counts.withLock({ counts -> Bool in
                    guard counts.accepting <= maxIdle else { return false }
                    counts.accepting += 1
                    return true
                })
            else { break }
            connection = accept(source)
            if connection == nil { break }
        }
        counts.withLock { $0.exited += 1 }
    }

    /// Accepts until this thread has a connection to serve (another thread accepts
    /// meanwhile), or nil when it should exit (it stopped accepting already).
    private func accept<Source: ConnectionSource>(_ source: Source) -> Source.Connection? {
        while true {
            switch source.accept() {
            case .connection(let connection):
                let serveHere = counts.withLock { counts -> Bool in
                    guard counts.accepting > 1 else { return false }
                    counts.accepting -= 1
                    return true
                }
                if serveHere { return connection }
                // The only accepting thread keeps accepting; a new thread serves.
                do {
                    try startThread(source, first: connection)
                } catch {
                    source.refuse(connection, because: error)
                }
            case .idle:
                let leave = counts.withLock { counts -> Bool in
                    guard counts.accepting > 1 else { return false }
                    counts.accepting -= 1
                    return true
                }
                if leave { return nil }
            case .nothing:
                continue
            case .stopped:
                counts.withLock { $0.accepting -= 1 }
                return nil
            }
        }
    }

    /// Empties the thread keyring if the thread has one (without creating it);
    /// false when it exists and could not be cleared.
    private static func clearThreadKeyring() -> Bool {
        guard let ring = try? KeySerial.threadKeyring.resolve(create: false) else { return true }
        return (try? ring.clear()) != nil
    }
}
