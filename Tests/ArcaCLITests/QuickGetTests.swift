import ArcaKeyring
import ArcaProtocol
import Testing

@testable import ArcaCLI

/// `QuickGet` answers `arca get` before the parser runs, so it must never read a
/// command line differently from the full path: every shape it takes is checked
/// against `Parser` + `Validation` here, and everything else must be left to them.
@Suite struct QuickGetTests {
    static func quick(_ words: [String]) -> GenericPasswordKey? {
        QuickGet.item(count: words.count) { words[$0] }.map {
            GenericPasswordKey(service: $0.service, account: $0.account)
        }
    }

    /// The item the full path reads from the kernel for `words`, or nil when it would
    /// not read the kernel (another command, or a usage error).
    static func fullPathKernelKey(_ words: [String]) -> KeyringItemKey? {
        guard let parsed = try? Parser.parse(words), let command = try? Validation.validate(parsed),
            case .get(let item, useKernel: true, json: false) = command
        else { return nil }
        return KeyringItemKey.named(by: item.allAttributes, itemClass: item.itemClass)
    }

    static let accepted: [([String], service: String, account: String)] = [
        (["get", "-s", "mail", "-a", "alice"], "mail", "alice"),
        (["get", "-a", "alice", "-s", "mail"], "mail", "alice"),
        (["get", "--service", "mail", "--account", "alice"], "mail", "alice"),
        (["get", "--service=mail", "--account=alice"], "mail", "alice"),
        (["get", "--account=alice", "-s", "mail"], "mail", "alice"),
        (["get", "-s", "a:b%c", "-a", "x y"], "a:b%c", "x y"),
        (["get", "--service=x=y", "-a", "~"], "x=y", "~"),
    ]

    @Test("each accepted shape names the item the parser and validation name", arguments: accepted)
    func agreesWithTheFullPath(words: [String], service: String, account: String) throws {
        let key = try #require(Self.quick(words))
        #expect(key == GenericPasswordKey(service: service, account: account))
        #expect(Self.fullPathKernelKey(words) == .genericPassword(key))
        #expect(
            QuickGet.keyDescription(service: service, account: account)
                == Self.fullPathKernelKey(words)?.keyDescription)
    }

    /// `-s V`, `--service V`, `--service=V` (and the same for the account).
    static func forms(_ short: String, _ long: String, _ value: String) -> [[String]] {
        [[short, value], [long, value], [long + "=" + value]]
    }

    static let generatedValues = ["mail", "a=b", "50%", "x:y", "two words", "~", "%3A", "=:% ~"]

    @Test("generated shapes (both orders, the three forms, values with = % : space ~) read the full path's key")
    func generatedShapesAgree() throws {
        var checked = 0
        for service in Self.generatedValues {
            for account in Self.generatedValues.reversed() {
                for serviceWords in Self.forms("-s", "--service", service) {
                    for accountWords in Self.forms("-a", "--account", account) {
                        for words in [["get"] + serviceWords + accountWords, ["get"] + accountWords + serviceWords] {
                            let names = try #require(QuickGet.item(count: words.count) { words[$0] }, "\(words)")
                            #expect(names.service == service && names.account == account, "\(words)")
                            let full = try #require(Self.fullPathKernelKey(words), "\(words)")
                            #expect(
                                QuickGet.keyDescription(service: names.service, account: names.account)
                                    == full.keyDescription, "\(words)")
                            checked += 1
                        }
                    }
                }
            }
        }
        #expect(checked == 8 * 8 * 3 * 3 * 2)
    }

    static let refused: [[String]] = [
        [],
        ["get"],
        ["get", "-s", "mail"],
        ["get", "-a", "alice"],
        ["version"],
        ["find", "-s", "mail", "-a", "alice"],
        ["--socket", "/s", "get", "-s", "mail", "-a", "alice"],
        ["get", "-s", "mail", "-a", "alice", "--json"],
        ["get", "-s", "mail", "-a", "alice", "--no-kernel"],
        ["get", "-s", "mail", "-a", "alice", "--system"],
        ["get", "-s", "mail", "-a", "alice", "-g", "grp"],
        ["get", "-s", "mail", "-a", "alice", "-h"],
        ["get", "-s", "mail", "-a", "alice", "--socket=/s"],
        ["get", "-s", "mail", "-a", "alice", "extra"],
        ["get", "-smail", "-aalice"],
        ["get", "-s", "mail", "-s", "mail", "-a", "alice"],
        ["get", "-s", "mail", "--service=mail", "-a", "alice"],
        ["get", "-s", "mail", "-a", "alice", "-a", "alice"],
        ["get", "-s", "mail", "-a"],
        ["get", "-s", "-a", "alice"],
        ["get", "--service", "-weird", "-a", "x"],
        ["get", "-s", "", "-a", "alice"],
        ["get", "--service=", "-a", "alice"],
        ["get", "-s", "mail", "-a", "ünï"],
        ["get", "-s", "tab\there", "-a", "alice"],
        ["get", "-s", "mail", "--", "-a", "alice"],
        ["get", "--internet", "-s", "mail", "-a", "alice"],
        ["get", "--server", "h", "-a", "alice"],
        ["get", "--service", "mail", "--acc", "alice"],
        ["GET", "-s", "mail", "-a", "alice"],
    ]

    @Test("every other command line goes to the full path", arguments: refused)
    func leavesTheRestToTheParser(words: [String]) {
        #expect(Self.quick(words) == nil)
    }

    @Test("a word past the end reads as empty, never as the next word")
    func countBoundsTheWords() {
        let words = ["get", "-s", "mail", "-a", "alice"]
        #expect(QuickGet.item(count: 4) { $0 < words.count ? words[$0] : "" } == nil)
        #expect(QuickGet.item(count: 5) { words[$0] }?.service == "mail")
    }
}
