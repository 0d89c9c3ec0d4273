import ArcaCrypto
import Foundation
import Testing

@testable import ArcaVault

/// The child executable built next to the test bundle.
func crashChildPath() throws -> String {
    let candidates = [
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent(),
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
    ].flatMap { [$0, $0.deletingLastPathComponent()] }
    for dir in candidates {
        let path = dir.appendingPathComponent("arca-vault-crashtest").path
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    throw VaultError.param("arca-vault-crashtest not found next to the test bundle")
}

/// Runs the child; kills it with SIGKILL after `killAfter` seconds (nil: waits for it).
/// Returns the complete lines it printed.
func runChild(_ arguments: [String], killAfter: Double?) throws -> [String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try crashChildPath())
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    if let killAfter {
        usleep(useconds_t(killAfter * 1_000_000))
        kill(process.processIdentifier, SIGKILL)
    }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let textOut = String(decoding: data, as: UTF8.self)
    // Only lines that ended with a newline were acknowledged in full.
    var lines = textOut.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    lines.removeLast()
    return lines
}

@Suite(.serialized) struct CrashTests {
    @Test func killedWhileAddingLosesNoAcknowledgedItem() throws {
        let dir = try TempDir()
        let (created, _) = try makeVault(dir)
        let path = created.path
        var acknowledged: [Int] = []
        var generator = SystemRandomNumberGenerator()
        for run in 0..<50 {
            let delay = Double.random(in: 0.02...0.25, using: &generator)
            let ids = try runChild(["add", path, password, String(run * 1_000_000)], killAfter: delay)
            acknowledged += ids.compactMap(Int.init)
            let missing = try missingItems(acknowledged, in: try Vault.open(at: path))
            #expect(missing.isEmpty, "run \(run): acknowledged but missing \(missing.prefix(5))")
            if !missing.isEmpty { break }
        }
        #expect(acknowledged.count > 50)
        // Every secret decrypts, too.
        let vault = try Vault.open(at: path)
        try vault.unlock(password: secret(password))
        let last = try #require(acknowledged.last)
        let some = try vault.copyMatching(query({ $0.account = "item-\(last)" }) { $0.returnData = true })
        #expect(text(some[0].data) == "secret-\(last)")
    }

    @Test func killedWhileChangingPasswordOneOfTheTwoOpensIt() throws {
        let dir = try TempDir()
        let (created, _) = try makeVault(dir)
        try created.add(.genericPassword, attributes: genp("kept", "a"), secret: secret("v"))
        let path = created.path
        var generator = SystemRandomNumberGenerator()
        for run in 0..<20 {
            _ = try runChild(
                ["passwd", path, password, "other password"],
                killAfter: Double.random(in: 0.02...0.2, using: &generator))
            let vault = try Vault.open(at: path)
            let opened =
                (try? vault.unlock(password: secret(password))) != nil
                || (try? vault.unlock(password: secret("other password"))) != nil
            #expect(opened, "run \(run): neither password opens the vault")
            #expect(
                text(try vault.copyMatching(query({ $0.service = "kept" }) { $0.returnData = true })[0].data) == "v")
        }
    }

    @Test func twoProcessesAddingAtOnceBothSucceed() throws {
        let dir = try TempDir()
        let (created, _) = try makeVault(dir)
        let path = created.path
        let group = DispatchGroup()
        let results = LockedBox<[[String]]>([])
        for first in [0, 10_000] {
            group.enter()
            DispatchQueue.global().async {
                let lines = (try? runChild(["add", path, password, String(first), "200"], killAfter: nil)) ?? []
                results.mutate { $0.append(lines) }
                group.leave()
            }
        }
        group.wait()
        #expect(results.value.map(\.count) == [200, 200])
        #expect(try created.itemCount() == 400)
    }
}

/// The ids of `acknowledged` whose items ("crash", "item-<id>") the vault lacks, once unlocked.
func missingItems(_ acknowledged: [Int], in vault: Vault) throws -> [Int] {
    try vault.unlock(password: secret(password))
    // A child killed before its first add left no item at all (under load, 20 ms
    // can pass before it opens the vault): nothing was acknowledged, nothing is missing.
    let stored: [ItemResult]
    do {
        stored = try vault.copyMatching(
            query({ $0.service = "crash" }) {
                $0.matchLimit = .all
                $0.returnAttributes = true
            })
    } catch VaultError.itemNotFound {
        stored = []
    }
    let present = Set(stored.compactMap { $0.attributes?.account })
    return acknowledged.filter { !present.contains("item-\($0)") }
}

/// A value shared between threads of a test.
// @unchecked: `stored` is touched only while `lock` is held.
final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    var value: T { lock.withLock { stored } }
    func mutate(_ body: (inout T) -> Void) { lock.withLock { body(&stored) } }
}
