import ArcaClient
import ArcaProtocol
import Foundation
import Testing

extension CLIAgainstArcadBinaryTests {
    /// `arca find` and `list` show the items desktop applications store through
    /// arca-secretd, with their Secret Service attributes, against a real arcad.
    @Suite struct SecretServiceGolden {
        @Test func findAndListShowAttributeItems() throws {
            let arcad = try TestArcad()
            defer { arcad.stop() }
            #expect(try arcad.arca(["init", "--no-recovery-key"], stdin: "pw\n").status == 0)
            // Stored as arca-secretd would (root may act for the owner).
            let client = try ArcadClient(path: arcad.socket, timeoutMilliseconds: 5000)
            let reply = try client.send(
                .addAttributeItem(
                    AttributeItemAdd(
                        uid: arcad.owner.uid, label: "Git: example.org",
                        attributes: [
                            "xdg:schema": "org.gnome.keyring.NetworkPassword", "server": "example.org",
                            "user": "Zoë = 1",
                        ],
                        contentType: "text/plain", secret: Array("tok".utf8))))
            guard case .attributeItems(let list) = reply, list.items.count == 1 else {
                Issue.record("unexpected reply \(reply)")
                return
            }
            // The random account, 32 hex digits.
            let listed = try arcad.arca(["list", "--json"]).stdout
            let match = try #require(listed.firstMatch(of: try Regex(#""account":"([0-9a-f]{32})""#)))
            let account = String(try #require(match.output[1].substring))
            let block = """
                class: genp
                account: \(account)
                label: Git: example.org
                creationDate: <date>
                modificationDate: <date>
                accessGroup: org.freedesktop.secrets
                synchronizable: false
                accessible: after-first-unlock
                contentType: text/plain
                attribute: server=example.org
                attribute: user=Zoë = 1
                attribute: xdg:schema=org.gnome.keyring.NetworkPassword

                """
            try check(
                [
                    Step(arguments: ["list"], stdout: block),
                    Step(arguments: ["find", "-g", "org.freedesktop.secrets", "-w"], stdout: block + "secret: tok\n"),
                    Step(
                        arguments: ["find", "--json", "-g", "org.freedesktop.secrets"],
                        stdout: "[{\"class\":\"genp\",\"account\":\"\(account)\",\"label\":\"Git: example.org\","
                            + "\"creationDate\":\"<date>\",\"modificationDate\":\"<date>\","
                            + "\"accessGroup\":\"org.freedesktop.secrets\",\"synchronizable\":false,"
                            + "\"accessible\":\"after-first-unlock\",\"contentType\":\"text/plain\","
                            + "\"secretServiceAttributes\":{\"server\":\"example.org\",\"user\":\"Zoë = 1\","
                            + "\"xdg:schema\":\"org.gnome.keyring.NetworkPassword\"}}]\n"),
                ], uid: arcad.owner.uid
            ) { arguments, stdin in try arcad.arca(arguments, stdin: stdin) }
        }
    }
}
