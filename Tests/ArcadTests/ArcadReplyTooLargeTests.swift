import ArcaKeyring
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Testing

/// Over the socket: a reply past one frame (2 MiB) reaches a real client as
/// `bufferTooSmall` (-25301, errSecBufferTooSmall) with "reply too large", the status a
/// batching client (arca-secretd) splits on; the connection stays usable.
@Suite("arcad binary: a reply too large for one frame (root, real kernel)", .serialized)
struct ArcadReplyTooLargeTests {
    @Test("three 900 KiB secrets in one reply: bufferTooSmall; each alone still reads")
    func replyTooLarge() throws {
        try withThrowawayUsers(1, prefix: "harden2big", cleanup: { try? KeyringLayout().purge(user: $0.uid) }) {
            users in
            let alice = users[0]
            let arcad = try ArcadProcess()
            defer { arcad.stop() }
            #expect(try arcad.send(.enroll(uid: alice.uid, key: try derive("pw"), parameters: e2eParameters)) == .ok)
            let vault = VaultID.user(uid: alice.uid)
            for account in ["a", "b", "c"] {
                let add = AddRequest(
                    vault: vault, itemClass: .genericPassword,
                    attributes: [.service: .string("big"), .account: .string(account)],
                    secret: [UInt8](repeating: 0x61, count: 900 << 10))
                #expect(try arcad.send(.add(add), timeoutMilliseconds: 60_000) == .items([]))
            }
            func read(_ attributes: AttributeMap) throws -> Reply {
                try arcad.send(
                    .copyMatching(
                        vault: vault,
                        query: Query(
                            itemClass: .genericPassword, attributes: attributes, matchLimit: .all,
                            returnFlags: .data)),
                    timeoutMilliseconds: 60_000)
            }
            #expect(
                try read([.service: .string("big")])
                    == .error(status: .bufferTooSmall, message: ProtocolLimits.replyTooLargeMessage))
            #expect(ArcaStatus.bufferTooSmall.rawValue == -25301)
            guard case .items(let one) = try read([.service: .string("big"), .account: .string("b")]) else {
                Issue.record("a single 900 KiB secret did not read")
                return
            }
            #expect(one.count == 1)
        }
    }
}
