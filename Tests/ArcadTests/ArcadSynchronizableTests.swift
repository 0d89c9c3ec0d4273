import ArcaKeyring
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Testing

/// Over the socket: a synchronizable ThisDeviceOnly item is refused with
/// errSecParam (-50), for an add and for an update that would make the pair.
@Suite("arcad binary: synchronizable + ThisDeviceOnly (root, real kernel)", .serialized)
struct ArcadSynchronizableTests {
    @Test("add and update of a synchronizable ThisDeviceOnly item get -50 and store nothing")
    func refused() throws {
        try withThrowawayUsers(1, prefix: "serversy", cleanup: { try? KeyringLayout().purge(user: $0.uid) }) { users in
            let alice = users[0]
            let arcad = try ArcadProcess()
            defer { arcad.stop() }
            #expect(try arcad.send(.enroll(uid: alice.uid, key: try derive("pw"), parameters: e2eParameters)) == .ok)
            let vault = VaultID.user(uid: alice.uid)
            func attributes(_ account: String, sync: Bool, _ accessible: Accessibility) -> AttributeMap {
                [
                    .service: .string("s"), .account: .string(account), .synchronizable: .bool(sync),
                    .accessible: .accessibility(accessible),
                ]
            }
            let message = "a synchronizable item cannot have a ThisDeviceOnly accessibility"
            let both = AddRequest(
                vault: vault, itemClass: .genericPassword,
                attributes: attributes("a", sync: true, .afterFirstUnlockThisDeviceOnly),
                secret: Array("x".utf8))
            #expect(try arcad.send(.add(both)) == .error(status: .param, message: message))
            #expect(ArcaStatus.param.rawValue == -50)

            let local = AddRequest(
                vault: vault, itemClass: .genericPassword,
                attributes: attributes("b", sync: false, .whenUnlockedThisDeviceOnly),
                secret: Array("y".utf8))
            #expect(try arcad.send(.add(local)) == .items([]))
            let update = UpdateRequest(
                vault: vault, query: Query(itemClass: .genericPassword, attributes: [.account: .string("b")]),
                attributes: [.synchronizable: .bool(true)], secret: nil)
            #expect(try arcad.send(.update(update)) == .error(status: .param, message: message))

            // Nothing was stored or changed: the one item is still local and not synchronizable.
            let all = try arcad.send(
                .copyMatching(
                    vault: vault,
                    query: Query(
                        itemClass: .genericPassword, attributes: [.service: .string("s")], matchLimit: .all,
                        returnFlags: .attributes, synchronizableAny: true)))
            guard case .items(let items) = all else {
                Issue.record("got \(all)")
                return
            }
            #expect(items.map { $0.attributes[.account] } == [.string("b")])
            #expect(items.first?.attributes[.synchronizable] == .bool(false))
        }
    }
}
