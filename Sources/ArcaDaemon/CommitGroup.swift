import ArcaProtocol
import ArcaVault

/// Group commit for one user's vault writes. Writers that arrive while another
/// is committing queue up; the next of them to run takes the whole queue, applies
/// every change in one SQLite transaction (each in its own savepoint) and commits
/// once: a burst of adds from several connections shares one WAL sync instead of
/// paying one each. Durability is unchanged: a writer returns (and its client is
/// answered) only after the commit that holds its change succeeded, and a failed
/// commit fails every change in it.
// @unchecked: the queue, the flag and every write's outcome are touched only while
// `condition` is held.
final class CommitGroup: @unchecked Sendable {
    /// One writer's change and, once its commit ended, the outcome.
    // @unchecked: `outcome` is written in `finish` and read in `next`, both under CommitGroup's `condition`.
    final class Write: @unchecked Sendable {
        /// Applies the change inside the open transaction: the reply and the events to
        /// post once it is durable.
        let change: (UserState, Vault) throws(HandlerError) -> (reply: Reply, events: [VaultEvent])
        fileprivate(set) var outcome: Result<Reply, HandlerError>?

        init(_ change: @escaping (UserState, Vault) throws(HandlerError) -> (reply: Reply, events: [VaultEvent])) {
            self.change = change
        }
    }

    private let condition = Condition()
    private var queued: [Write] = []
    private var committing = false
    /// Commits made and writes they held, for tests: proof that a burst shared commits.
    private(set) var statistics = (commits: 0, writes: 0)

    /// Queues `write`; then either waits until a committing thread has given it its
    /// outcome (nil), or returns the batch this thread must now commit (which holds
    /// `write`), after which it calls `finish`.
    func next(for write: Write, enqueue: Bool) -> [Write]? {
        condition.withLock {
            if enqueue { queued.append(write) }
            while write.outcome == nil && committing { condition.wait() }
            guard write.outcome == nil else { return nil }
            committing = true
            defer { queued.removeAll() }
            return queued
        }
    }

    /// Ends a commit: every write of `batch` has its outcome; the next waiter leads.
    func finish(_ batch: [Write], outcomes: [Result<Reply, HandlerError>]) {
        condition.withLock {
            for (write, outcome) in zip(batch, outcomes) { write.outcome = outcome }
            statistics.commits += 1
            statistics.writes += batch.count
            committing = false
            condition.broadcast()
        }
    }

    /// The counts so far, read under the lock.
    var counts: (commits: Int, writes: Int) { condition.withLock { statistics } }
}

extension Daemon {
    /// Runs `change` on `uid`'s vault as part of a group commit, and returns its
    /// reply once the change is durable. Events are posted after the commit, so a
    /// listener never hears of a change that a failed commit undid.
    func groupCommit(
        uid: UInt32, _ change: @escaping (UserState, Vault) throws(HandlerError) -> (reply: Reply, events: [VaultEvent])
    ) throws(HandlerError) -> Reply {
        let context = context(uid)
        let write = CommitGroup.Write(change)
        var enqueue = true
        while let batch = context.commits.next(for: write, enqueue: enqueue) {
            enqueue = false
            context.commits.finish(batch, outcomes: commitBatch(batch, in: context))
        }
        guard let outcome = write.outcome else { throw HandlerError(.internalComponent, "a write lost its commit") }
        return try outcome.get()
    }

    /// Applies `batch` in one transaction under the user's lock, each write in its own
    /// savepoint (a write that throws undoes only itself), and commits it.
    func commitBatch(_ batch: [CommitGroup.Write], in context: UserContext) -> [Result<Reply, HandlerError>] {
        var outcomes = [Result<Reply, HandlerError>?](repeating: nil, count: batch.count)
        do {
            try context.withLock { state throws(HandlerError) in
                let vault = try requireVault(of: state)
                var applied: [(index: Int, events: [VaultEvent])] = []
                do {
                    try vault.inOneTransaction {
                        for (i, write) in batch.enumerated() {
                            // SQLite ended the transaction after a disk error: what follows would
                            // commit on its own, unacknowledged by the final commit's result.
                            guard vault.isInTransaction else {
                                outcomes[i] = .failure(
                                    .vault(
                                        VaultError.storage(path: vault.path, reason: "the transaction was rolled back"))
                                )
                                continue
                            }
                            do {
                                let (reply, events) = try vault.inOneTransaction {
                                    do throws(HandlerError) { return try write.change(state, vault) } catch {
                                        throw WriteFailed(error: error)
                                    }
                                }
                                outcomes[i] = .success(reply)
                                applied.append((i, events))
                            } catch let failed as WriteFailed {
                                outcomes[i] = .failure(failed.error)
                            } catch {
                                outcomes[i] = .failure(.vault(error))
                            }
                        }
                    }
                } catch {
                    // The commit failed: nothing of this batch is durable, so nothing succeeded.
                    for (i, _) in applied { outcomes[i] = .failure(.vault(error)) }
                    return
                }
                for (_, events) in applied { self.events.post(uid: state.uid, events) }
            }
        } catch {
            // No vault (or none readable): every write of the batch gets that answer.
            for i in outcomes.indices {
                if case .none = outcomes[i] { outcomes[i] = .failure(error) }
            }
        }
        return outcomes.map { $0 ?? .failure(HandlerError(.internalComponent, "a write was not applied")) }
    }
}

/// A write's own refusal, carried out of its savepoint (which it rolls back).
private struct WriteFailed: Error {
    let error: HandlerError
}
