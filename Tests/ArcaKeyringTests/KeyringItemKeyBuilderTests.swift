import ArcaProtocol
import Testing

@testable import ArcaKeyring

/// The builder that arcad publishes with and the CLI and the library search with
/// (`KeyringItemKey(itemClass:attributes:)`, `named(by:itemClass:)`): these pin the
/// description each attribute map gives, so a change shows up here and not as reads
/// silently falling back to the socket.
@Suite("Item key builder from attributes (no root needed)")
struct KeyringItemKeyBuilderTests {
    @Test("a stored item's attributes give the description arca-keyring(7) documents")
    func storedItems() {
        let genp: AttributeMap = [
            .itemClass: .itemClass(.genericPassword), .service: .string("mail"), .account: .string("alice"),
            .accessGroup: .string("team"), .synchronizable: .bool(true), .label: .string("Mail"),
            .accessible: .accessibility(.afterFirstUnlock),
        ]
        #expect(
            KeyringItemKey(itemClass: .genericPassword, attributes: genp).keyDescription
                == "arca:genp:mail:alice:g=team:sync")
        let inet: AttributeMap = [
            .server: .string("example.org"), .account: .string("bob"), .protocol: .string("htps"),
            .port: .uint32(8443), .path: .string("/a:b"), .securityDomain: .string("realm"),
            .authenticationType: .string("form"), .comment: .string("c"),
        ]
        #expect(
            KeyringItemKey(itemClass: .internetPassword, attributes: inet).keyDescription
                == "arca:inet:example.org:bob:proto=htps:port=8443:path=/a%3Ab:domain=realm:auth=form")
        // An item stored without an account or service has the empty defaults.
        #expect(KeyringItemKey(itemClass: .genericPassword, attributes: [:]).keyDescription == "arca:genp::")
        #expect(
            KeyringItemKey(itemClass: .genericPassword, attributes: [.synchronizable: .bool(false)])
                == .genericPassword(GenericPasswordKey(service: "", account: "")))
    }

    @Test("a lookup of service and account names the same key the stored item has")
    func lookupMatchesStoredItem() throws {
        let lookup: AttributeMap = [.service: .string("mail"), .account: .string("alice"), .accessGroup: .string("g")]
        let stored = lookup.merging([.label: .string("Mail"), .creator: .uint32(7)]) { a, _ in a }
        let named = try #require(KeyringItemKey.named(by: lookup, itemClass: .genericPassword))
        #expect(named == KeyringItemKey(itemClass: .genericPassword, attributes: stored))
        #expect(named.keyDescription == "arca:genp:mail:alice:g=g")
        let inet = try #require(
            KeyringItemKey.named(
                by: [.server: .string("h"), .account: .string("u"), .port: .uint32(22)], itemClass: .internetPassword))
        #expect(inet.keyDescription == "arca:inet:h:u:port=22")
    }

    @Test(
        "a lookup the kernel cannot answer exactly names no key",
        arguments: [
            (ItemClass.genericPassword, [AttributeTag.account: AttributeValue.string("alice")]),  // no service
            (.genericPassword, [.service: .string("mail")]),  // no account
            (.genericPassword, [.service: .string("mail"), .account: .string("a"), .label: .string("L")]),
            (.genericPassword, [.service: .string("mail"), .account: .string("a"), .synchronizable: .uint32(1)]),
            (.genericPassword, [.service: .string("mail"), .account: .string("a"), .server: .string("h")]),
            (.internetPassword, [.server: .string("h"), .account: .string("u"), .port: .string("22")]),
            (.internetPassword, [.service: .string("h"), .account: .string("u")]),
        ])
    func lookupsForArcad(itemClass: ItemClass, lookup: AttributeMap) {
        #expect(KeyringItemKey.named(by: lookup, itemClass: itemClass) == nil)
    }
}
