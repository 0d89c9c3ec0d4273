import ArcaClient
import ArcaProtocol
import ArcaSecretService

#if canImport(Glibc)
    import Glibc
#endif

/// `arca-secretd --import [--from secret-service] [--bus-name NAME] [--collection C]
/// [--dry-run] [--json] [--socket PATH]`, which `arca import --from secret-service`
/// execs: copies the running provider's items into the user's vault. Exit 0 when
/// every item was imported or already present, 1 when some failed or nothing could
/// run, 2 for a usage error.
enum ImportCommand {
    static let usage =
        "usage: arca import --from secret-service [--bus-name NAME] [--collection C] [--dry-run] [--json] [--socket PATH]"

    static func run(_ words: [String]) -> Never {
        var options = SecretImport.Options()
        var json = false
        var socketPath = ArcadClient.environmentSocketPath
        var arguments = ArraySlice(words)
        while let word = arguments.popFirst() {
            // `--name=value` as arca accepts it.
            var name = word
            var inline: String?
            if word.hasPrefix("--"), let equals = word.firstIndex(of: "=") {
                name = String(word[..<equals])
                inline = String(word[word.index(after: equals)...])
            }
            func value() -> String {
                if let inline { return inline }
                guard let next = arguments.popFirst() else { fail("\(name) needs a value\n\(usage)", code: 2) }
                return next
            }
            switch name {
            case "--from":
                let source = value()
                guard source == "secret-service" else {
                    fail("import: only --from secret-service is read here, not \(source)\n\(usage)", code: 2)
                }
            case "--bus-name": options.busName = value()
            case "--collection": options.collection = value()
            case "--socket": socketPath = value()
            case "--dry-run" where inline == nil: options.dryRun = true
            case "--json" where inline == nil: json = true
            case "--help" where inline == nil, "-h":
                print(usage)
                print("Copies every item of the running Secret Service provider into your Arca vault.")
                exit(0)
            default: fail("import: unknown option \(word)\n\(usage)", code: 2)
            }
        }
        do throws(SecretImport.ImportError) {
            let summary = try SecretImport(uid: getuid(), socketPath: socketPath, options: options).run()
            print(json ? summary.json : summary.text)
            exit(summary.failed.isEmpty ? 0 : 1)
        } catch {
            fail("import: \(error)", code: 1)
        }
    }
}
