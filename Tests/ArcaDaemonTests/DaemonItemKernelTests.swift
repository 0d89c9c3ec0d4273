import ArcaProtocol
import Foundation
import Testing

@testable import ArcaDaemon

/// An update or delete changes the kernel one key at a time (no ring rebuilt), so
/// its cost stays flat in the vault's size: exact kernel calls, over the recording twin.
@Suite("in-process arcad: updates and deletes reach the kernel per item (root)", .serialized)
struct DaemonItemKernelTests {
    let alice: UInt32 = 60_011

    /// A daemon with `alice` enrolled and `count` items "svc"/"a0"… (secrets "s0"…), calls cleared.
    func vault(_ count: Int) throws -> TestDaemon {
        let t = try TestDaemon()
        _ = try enrolled(t, alice)
        for i in 0..<count { #expect(t.send(addRequest(alice, "svc", "a\(i)", "s\(i)"), as: alice) == .items([])) }
        t.kernel.clearCalls()
        return t
    }

    func update(_ t: TestDaemon, _ account: String, _ attributes: AttributeMap, secret: String? = nil) -> Reply {
        t.send(
            .update(
                UpdateRequest(
                    vault: .user(uid: alice),
                    query: Query(itemClass: .genericPassword, attributes: genp("svc", account)),
                    attributes: attributes, secret: secret.map { Array($0.utf8) })),
            as: alice)
    }

    @Test("a new secret for one item of 200 is one put, no install")
    func oneSecret() throws {
        let t = try vault(200)
        defer { t.cleanUp() }
        #expect(update(t, "a7", [:], secret: "new") == .ok)
        #expect(t.kernel.calls == ["put whenUnlocked arca:genp:svc:a7"])
        #expect(t.kernel.ring(alice, .whenUnlocked)?.count == 200)
        #expect(t.kernel.ring(alice, .whenUnlocked)?["arca:genp:svc:a7"] == "new")
        #expect(t.kernel.ring(alice, .whenUnlocked)?["arca:genp:svc:a8"] == "s8")
    }

    @Test("a class change is a drop from the old ring and a put of the kept secret into the new one")
    func classChange() throws {
        let t = try vault(3)
        defer { t.cleanUp() }
        #expect(update(t, "a1", [.accessible: .accessibility(.afterFirstUnlock)]) == .ok)
        #expect(t.kernel.calls == ["drop whenUnlocked arca:genp:svc:a1", "put afterFirstUnlock arca:genp:svc:a1"])
        #expect(t.kernel.ring(alice, .whenUnlocked) == ["arca:genp:svc:a0": "s0", "arca:genp:svc:a2": "s2"])
        #expect(t.kernel.ring(alice, .afterFirstUnlock) == ["arca:genp:svc:a1": "s1"])
    }

    @Test("an account rename drops the old description and puts the new one")
    func accountRename() throws {
        let t = try vault(3)
        defer { t.cleanUp() }
        #expect(update(t, "a1", [.account: .string("b1")], secret: "n1") == .ok)
        #expect(t.kernel.calls == ["drop whenUnlocked arca:genp:svc:a1", "put whenUnlocked arca:genp:svc:b1"])
        #expect(
            t.kernel.ring(alice, .whenUnlocked)
                == ["arca:genp:svc:a0": "s0", "arca:genp:svc:b1": "n1", "arca:genp:svc:a2": "s2"])
    }

    @Test("a label change that keeps the secret makes no kernel call")
    func labelOnly() throws {
        let t = try vault(3)
        defer { t.cleanUp() }
        #expect(update(t, "a1", [.label: .string("new label")]) == .ok)
        #expect(t.kernel.calls == [])
        #expect(t.kernel.ring(alice, .whenUnlocked)?["arca:genp:svc:a1"] == "s1")
    }

    @Test("a Secret Service item's update and delete make no kernel call")
    func secretServiceItem() throws {
        let t = try vault(1)
        defer { t.cleanUp() }
        let added = t.send(
            .addAttributeItem(
                AttributeItemAdd(
                    uid: alice, label: "l", attributes: ["xdg:schema": "org.x"], contentType: "text/plain",
                    secret: Array("pw".utf8), replace: false)), as: alice)
        guard case .attributeItems = added else {
            Issue.record("no attribute item: \(added)")
            return
        }
        t.kernel.clearCalls()
        let query = Query(
            itemClass: .genericPassword, attributes: [.accessGroup: .string("org.freedesktop.secrets")])
        #expect(
            t.send(
                .update(
                    UpdateRequest(
                        vault: .user(uid: alice), query: query, attributes: [.label: .string("m")],
                        secret: Array("pw2".utf8))), as: alice) == .ok)
        #expect(t.send(.delete(vault: .user(uid: alice), query: query), as: alice) == .ok)
        #expect(t.kernel.calls == [])
        #expect(t.kernel.ring(alice, .afterFirstUnlock) == [:])
    }

    @Test("deleting 5 items of 20 is 5 drops, no install")
    func deleteSome() throws {
        let t = try vault(20)
        defer { t.cleanUp() }
        for i in 0..<5 { #expect(update(t, "a\(i)", [.label: .string("gone")]) == .ok) }
        let query = Query(itemClass: .genericPassword, attributes: [.label: .string("gone")])
        #expect(t.send(.delete(vault: .user(uid: alice), query: query), as: alice) == .ok)
        #expect(t.kernel.calls.sorted() == (0..<5).map { "drop whenUnlocked arca:genp:svc:a\($0)" })
        #expect(t.kernel.ring(alice, .whenUnlocked)?.count == 15)
        #expect(t.kernel.ring(alice, .whenUnlocked)?["arca:genp:svc:a0"] == nil)
    }

    @Test("a put answered with .reinstall rebuilds that class's ring only")
    func reinstall() throws {
        let t = try vault(3)
        defer { t.cleanUp() }
        t.kernel.putsReinstall.store(true, ordering: .relaxed)
        #expect(update(t, "a1", [:], secret: "n1") == .ok)
        #expect(t.kernel.calls == ["put whenUnlocked arca:genp:svc:a1", "install whenUnlocked"])
        #expect(t.kernel.ring(alice, .whenUnlocked)?["arca:genp:svc:a1"] == "n1")
    }

    @Test("a write matching more than 64 items rebuilds the touched rings instead")
    func manyItems() throws {
        let t = try vault(65)
        defer { t.cleanUp() }
        let all = Query(itemClass: .genericPassword, attributes: [.service: .string("svc")])
        #expect(t.send(.delete(vault: .user(uid: alice), query: all), as: alice) == .ok)
        #expect(t.kernel.calls == ["install whenUnlocked"])
        #expect(t.kernel.ring(alice, .whenUnlocked) == [:])
    }

    @Test("status counts a socket-only item until an update makes it fit, and forgets it when deleted")
    func notInKernelCount() throws {
        let t = try vault(1)
        defer { t.cleanUp() }
        let big = String(repeating: "x", count: 40_000)
        #expect(t.send(addRequest(alice, "svc", "big", big), as: alice) == .items([]))
        #expect(itemsNotInKernel(t, alice) == 1)
        #expect(update(t, "a0", [:], secret: big) == .ok)
        #expect(itemsNotInKernel(t, alice) == 2)
        #expect(update(t, "big", [:], secret: "small") == .ok)
        #expect(itemsNotInKernel(t, alice) == 1)
        #expect(t.kernel.ring(alice, .whenUnlocked)?["arca:genp:svc:big"] == "small")
        #expect(update(t, "a0", [.accessible: .accessibility(.afterFirstUnlock)]) == .ok)
        #expect(itemsNotInKernel(t, alice) == 1)
        let query = Query(itemClass: .genericPassword, attributes: genp("svc", "a0"))
        #expect(t.send(.delete(vault: .user(uid: alice), query: query), as: alice) == .ok)
        #expect(itemsNotInKernel(t, alice) == 0)
    }
}
