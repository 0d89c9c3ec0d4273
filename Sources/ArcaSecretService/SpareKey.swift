import Synchronization

/// The next DH key pair, made ahead of time so that OpenSession does one exponentiation
/// (the shared secret), not two. A pair is made on a thread of its own as soon as the last
/// one is taken: made on the bus thread, it delayed the call a client sends right after
/// OpenSession's reply (SearchItems, in `secret-tool lookup`), and made only once the bus had
/// been quiet a while, it was never ready for lookups that follow each other closely (a
/// script's, or a benchmark's), which then paid both exponentiations inside OpenSession.
/// The private key lives in `SecretBytes` (mlocked, zeroed when the pair is dropped), and a
/// pair is handed out once.
final class SpareKey: Sendable {
    private struct State {
        var pair: DHKeyPair?
        /// A thread is making the next pair.
        var making = false
    }
    private let state = Mutex(State())

    /// Whether a pair is ready or on its way (the bus loop then need not make one).
    var isReadyOrMaking: Bool { state.withLock { $0.pair != nil || $0.making } }

    /// Whether a pair is ready.
    var isReady: Bool { state.withLock { $0.pair != nil } }

    /// The ready pair's public key (tests: which pair `take` will hand out).
    var peekPublicKey: [UInt8]? { state.withLock { $0.pair?.publicKey } }

    /// The spare pair, or a new one made now; either way the next is started at once.
    func take() throws(SessionCryptoError) -> DHKeyPair {
        let spare = state.withLock { s in
            defer { s.pair = nil }
            return s.pair
        }
        startNext()
        if let spare { return spare }
        return try DHKeyPair.generate()
    }

    /// Makes a pair on the calling thread when none is ready or on its way (the bus loop,
    /// once idle: at start, or when no thread could be started).
    func fill() {
        guard !isReadyOrMaking, let pair = try? DHKeyPair.generate() else { return }
        state.withLock { s in
            if s.pair == nil { s.pair = pair }
        }
    }

    /// Starts a thread that makes the next pair, unless one is ready or on its way.
    private func startNext() {
        let start = state.withLock { s in
            guard s.pair == nil, !s.making else { return false }
            s.making = true
            return true
        }
        guard start else { return }
        let started = Threads.detach { [self] in
            let pair = try? DHKeyPair.generate()
            state.withLock { s in
                if s.pair == nil { s.pair = pair }
                s.making = false
            }
        }
        // No thread: the bus loop makes the pair once idle (`fill`).
        if !started { state.withLock { $0.making = false } }
    }
}
