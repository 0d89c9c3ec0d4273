import ArcaTestSupport
import Foundation
import Testing

@testable import ArcaCLI

extension CLIAgainstArcadBinaryTests {
    /// Golden output of the system-vault verbs: root writes and grants, the granted
    /// user reads (persistent keyring first, then arcad), another user cannot.
    @Suite struct SystemGolden {
        static let item = ["-s", "postgresql", "-a", "postgres"]

        @Test func systemVerbs() throws {
            let arcad = try TestArcad()
            let other = try TestUser.create(prefix: "arcacli")
            defer {
                _ = try? arcad.asRoot(["revoke"] + Self.item)
                arcad.stop()
                other.remove()
            }
            let owner = arcad.owner
            func asOwner(_ steps: [Step]) throws { try check(steps, uid: owner.uid, arcad.arca) }
            func asRoot(_ steps: [Step]) throws { try check(steps, uid: owner.uid, arcad.asRoot) }
            func asOther(_ steps: [Step]) throws { try check(steps) { try arcad.arca(as: other, $0, stdin: $1) } }
            try asOwner([
                Step(
                    arguments: ["add", "--system"] + Self.item, stdin: "x", status: 47,
                    stderr: "arca: add: not allowed\n"),
                Step(
                    arguments: ["add", "--allow-user", "root"] + Self.item, status: 2,
                    stderr: "error: option --allow-user needs --system\nusage: arca add [options]\n"),
                Step(arguments: ["grants"], status: 47, stderr: "arca: grants: not allowed\n"),
            ])
            try asRoot([
                Step(
                    arguments: ["add", "--system", "--allow-user", owner.name, "--allow-unit", "pg.service"]
                        + Self.item,
                    stdin: "s3cret"),
                Step(
                    arguments: ["grants"],
                    stdout: """
                        service: postgresql
                        account: postgres
                        user: \(owner.name) (<uid>)
                        unit: pg.service (credential postgresql)

                        """),
                Step(
                    arguments: ["grant", "--allow-group", "0", "--allow-unit", "postgresql.service:db-password"]
                        + Self.item),
                Step(
                    arguments: ["grants", "--json"],
                    stdout: """
                        [{"service":"postgresql","account":"postgres","users":[<uid>],"groups":[0],\
                        "units":[{"unit":"pg.service","credential":"postgresql"},\
                        {"unit":"postgresql.service","credential":"db-password"}]}]

                        """),
                Step(
                    arguments: ["grant"] + Self.item, status: 2,
                    stderr:
                        "error: 'grant' needs --allow-user, --allow-group or --allow-unit\nusage: arca grant [options]\n"
                ),
                Step(arguments: ["get", "--system", "--no-kernel"] + Self.item, stdout: "s3cret"),
            ])
            try asOwner([
                // From the owner's persistent keyring: a dead socket does not matter.
                Step(
                    arguments: ["get", "--system", "--socket", "/nonexistent/arcad.sock"] + Self.item, stdout: "s3cret"),
                Step(arguments: ["get", "--system", "--no-kernel"] + Self.item, stdout: "s3cret"),
                Step(arguments: ["get", "--system", "--json"] + Self.item, stdout: "{\"secret\":\"s3cret\"}\n"),
            ])
            try asOther([
                Step(arguments: ["get", "--system"] + Self.item, status: 44, stderr: "arca: get: no such item\n")
            ])
            try asRoot([
                Step(arguments: ["revoke", "--allow-user", owner.name] + Self.item)
            ])
            try asOwner([
                Step(arguments: ["get", "--system"] + Self.item, status: 44, stderr: "arca: get: no such item\n")
            ])
            try asRoot([
                Step(arguments: ["revoke"] + Self.item),
                Step(arguments: ["grants"]),
                Step(arguments: ["delete", "--system"] + Self.item),
                Step(
                    arguments: ["delete", "--system"] + Self.item, status: 44, stderr: "arca: delete: no such item\n"),
            ])
        }
    }
}
