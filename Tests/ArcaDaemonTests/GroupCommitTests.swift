import ArcaCrypto
import ArcaProtocol
import ArcaVault
import Foundation
import Synchronization
import Testing

@testable import ArcaDaemon

/// Group commit (`CommitGroup`): concurrent adds of one user share commits; each
/// writer is answered with its own item, a failing write in a batch fails alone,
/// and events are posted only for what was committed. In process (root: key parking
/// uses root's real keyring); the SIGKILL test is in ArcadTests.
@Suite("in-process arcad: group commit of attribute-item adds (root)", .serialized)
struct GroupCommitTests {
    let alice: UInt32 = 60_031

    func add(_ t: TestDaemon, _ n: Int, attributes extra: [String: String] = [:], replace: Bool = false) -> Reply {
        t.send(
            .addAttributeItem(
                AttributeItemAdd(
                    uid: alice, label: "item \(n)",
                    attributes: ["burst": "1", "n": String(n)].merging(extra) { a, _ in a },
                    contentType: "text/plain", secret: Array("s\(n)".utf8), replace: replace)), as: alice)
    }

    @Test("8 connections adding at once: every add answered with its own item, fewer commits than writes")
    func concurrentAddsShareCommits() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        let replies = Mutex<[Int: Reply]>([:])
        let done = DispatchGroup()
        for writer in 0..<8 {
            done.enter()
            Thread {
                for i in 0..<25 {
                    let n = writer * 100 + i
                    let reply = add(t, n)
                    replies.withLock { $0[n] = reply }
                }
                done.leave()
            }.start()
        }
        done.wait()
        let all = replies.withLock { $0 }
        #expect(all.count == 200)
        for (n, reply) in all {
            guard case .attributeItems(let list) = reply, list.items.count == 1 else {
                Issue.record("add \(n): \(reply)")
                continue
            }
            #expect(list.items[0].label == "item \(n)")
            #expect(list.items[0].attributes["n"] == String(n))
        }
        let counts = t.daemon.context(alice).commits.counts
        #expect(counts.writes == 200)
        #expect(counts.commits < 200, "no two adds shared a commit: \(counts)")
        guard
            case .attributeItems(let found) = t.send(
                .searchAttributeItems(uid: alice, attributes: ["burst": "1"], returnSecrets: true), as: alice)
        else {
            Issue.record("no search reply")
            return
        }
        #expect(found.items.count == 200)
        #expect(Set(found.items.map { $0.secret ?? [] }) == Set(all.keys.map { Array("s\($0)".utf8) }))
    }

    @Test("a batch: a failing write fails alone, the others commit; events only for committed items")
    func failingWriteInABatch() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        guard case .events(let start) = t.send(.waitEvents(uid: alice, after: 0, timeoutMilliseconds: 0), as: alice)
        else { return }
        // Three writes committed as one batch, the middle one failing after it wrote.
        let context = t.daemon.context(alice)
        let writes = (0..<3).map { i in
            CommitGroup.Write { state, vault throws(HandlerError) in
                let item: AttributeItem
                do {
                    item = try vault.addAttributeItem(
                        label: "w\(i)", attributes: ["w": String(i)], contentType: "text/plain",
                        secret: try SecretBytes(count: 0),
                        accessible: nil, replace: false
                    ).item
                } catch {
                    throw .vault(error)
                }
                if i == 1 { throw HandlerError(.param, "refused after writing") }
                return (.ok, [.itemAdded(reference: item.reference.bytes)])
            }
        }
        let outcomes = t.daemon.commitBatch(writes, in: context)
        #expect(outcomes.map { (try? $0.get()) == .ok } == [true, false, true])
        #expect((try? outcomes[1].get()) == nil)
        guard
            case .attributeItems(let found) = t.send(
                .searchAttributeItems(uid: alice, attributes: [:], returnSecrets: false), as: alice)
        else { return }
        #expect(found.items.map(\.label).sorted() == ["w0", "w2"])
        guard
            case .events(let batch) = t.send(
                .waitEvents(uid: alice, after: start.next, timeoutMilliseconds: 0), as: alice)
        else { return }
        #expect(batch.events.count == 2)
    }
}
