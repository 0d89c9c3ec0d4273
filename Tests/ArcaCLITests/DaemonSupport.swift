import ArcaTestSupport
import Foundation
import Testing

/// The suites that start arcad run one at a time: arcad installs rings in the
/// owner's user keyring, and two daemons must not take turns replacing them.
@Suite(.serialized) enum CLIAgainstArcadBinaryTests {}

/// An arcad started for one test (``ArcadProcess``), and a throwaway user who owns
/// the vault (root's own keyring is shared with every other suite and session on the
/// machine). `stop()` locks every vault, so no key stays in the kernel, kills arcad,
/// drops its parked keys and removes the user.
final class TestArcad {
    let arcad: ArcadProcess
    let owner: TestUser
    /// arcad's socket.
    var socket: String { arcad.socket }
    /// The test's temporary directory (state, socket, log), deleted by `stop()`.
    var directory: String { arcad.directory }

    /// `ownerPrefix` names the throwaway owner; `config` is arcad's arca.conf.
    init(ownerPrefix: String = "arcacli", config: String = "") throws {
        try #require(getuid() == 0, "the arca daemon tests must run as root (they start arcad and create users)")
        owner = try TestUser.create(prefix: ownerPrefix)
        arcad = try ArcadProcess(prefix: "arca-cli", config: config)
    }

    /// Runs `arca` as the owner against this daemon.
    func arca(_ arguments: [String], stdin: String = "") throws -> Run {
        try arca(as: owner, arguments, stdin: stdin)
    }

    /// Runs `arca` as root against this daemon.
    func asRoot(_ arguments: [String], stdin: String = "") throws -> Run {
        try ArcaCLITests.arca(arguments, stdin: stdin, environment: ["ARCA_SOCKET": socket])
    }

    /// Runs `arca` as `user` against this daemon.
    func arca(as user: TestUser, _ arguments: [String], stdin: String = "") throws -> Run {
        try run(user.command([arcaPath] + arguments), stdin: stdin, environment: ["ARCA_SOCKET": socket])
    }

    func stop() {
        arcad.stop()
        owner.remove()
    }
}

/// Replaces what changes from run to run (dates, key ids, recovery keys) with placeholders.
func normalized(_ text: String, uid: UInt32? = nil) -> String {
    var text = text
    if let uid { text = text.replacingOccurrences(of: #"\b\#(uid)\b"#, with: "<uid>", options: .regularExpression) }
    let patterns: [(String, String)] = [
        (#"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"#, "<date>"),
        (#"(?m)^ *\d+ "#, "<id> "),
        (#"(?m)^[0-9A-Z]{4}(-[0-9A-Z]{2,4})+$"#, "<recovery key>"),
    ]
    for (pattern, replacement) in patterns {
        text = text.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
    }
    return text
}
