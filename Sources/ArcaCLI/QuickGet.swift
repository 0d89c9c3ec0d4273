import ArcaCrypto
import ArcaKeyring
import ArcaSystem

/// `arca get -s SERVICE -a ACCOUNT` answered from the kernel before anything else of
/// the CLI runs: the one command scripts and logins run over and over, and the one
/// bench/cli holds against `keyctl print` (issue 16 §7). Building the command table,
/// parsing `CommandLine.arguments` into dictionaries and validating them cost a fresh
/// process about as much as the whole of `keyctl print`'s work after exec, almost all
/// of it generic metadata instantiated on first use and the pages it faults in.
///
/// It takes only a command line of exactly the shape ``item(count:word:)`` accepts,
/// which the full path reads as the same item (`QuickGetTests` checks each shape
/// against ``Parser`` and ``Validation``), and only an item the kernel holds: for
/// anything else, and on any miss, it returns nil and ``CLI/main()`` runs the full
/// path, which reads the kernel again and then asks arcad. What it writes on a hit is
/// what the full path writes: the secret's bytes, a newline only on a terminal, exit 0.
enum QuickGet {
    /// The largest secret read this way: one pool slot (`SecretBytes`). A larger one
    /// (the kernel holds up to 32,767 bytes) takes the full path.
    static let bufferSize = 4_096

    /// The service and account of the generic password a command line names if it has exactly the shape
    /// `get` followed by `-s SERVICE` / `--service SERVICE` / `--service=SERVICE` and
    /// `-a ACCOUNT` / `--account ACCOUNT` / `--account=ACCOUNT`, in either order, each
    /// once, with values of printable ASCII that do not start with `-`; nil for any
    /// other command line. `word(i)` is word `i` after the program name. (Two strings rather
    /// than an optional `GenericPasswordKey`, whose destruction instantiates its metadata.)
    static func item(count: Int, word: (Int) -> String) -> (service: String, account: String)? {
        guard (3...5).contains(count), word(0) == "get" else { return nil }
        var service: String?
        var account: String?
        var index = 1
        while index < count {
            let option = word(index)
            index += 1
            let value: String
            let isService: Bool
            if option == "-s" || option == "--service" || option == "-a" || option == "--account" {
                guard index < count else { return nil }
                value = word(index)
                index += 1
                isService = option == "-s" || option == "--service"
            } else if option.hasPrefix("--service=") {
                value = String(option.dropFirst(10))
                isService = true
            } else if option.hasPrefix("--account=") {
                value = String(option.dropFirst(10))
                isService = false
            } else {
                return nil
            }
            guard isPlain(value) else { return nil }
            if isService {
                guard service == nil else { return nil }
                service = value
            } else {
                guard account == nil else { return nil }
                account = value
            }
        }
        guard let service, let account else { return nil }
        return (service, account)
    }

    /// Printable ASCII, not empty, not starting with `-` (which the parser would
    /// read as a value, and a reader as an option).
    private static func isPlain(_ value: String) -> Bool {
        guard let first = value.utf8.first, first != UInt8(ascii: "-") else { return false }
        return value.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7f }
    }

    /// The description of the kernel key the quick path reads: the generic password's,
    /// without access group or synchronizable (`QuickGetTests` holds it against the full
    /// path's ``KeyringItemKey/keyDescription`` for each accepted command line).
    static func keyDescription(service: String, account: String) -> String {
        KeyringItemKey.genericPassword(GenericPasswordKey(service: service, account: account)).keyDescription
    }

    /// Answers this process's command line from the kernel: the exit status, or nil
    /// when the full path must run (another command line, or no such item in the kernel).
    static func run() -> Int32? {
        guard let names = item(count: ProcessArguments.count, word: ProcessArguments.word),
            let secret = try? SecretBytes(count: bufferSize)
        else { return nil }
        let description = keyDescription(service: names.service, account: names.account)
        guard let length = try? KeyringReader().read(description: description, into: secret), length < bufferSize
        else { return nil }
        // The newline goes into the slot behind the secret: one write, as the full path's.
        let total = Terminal.standardOutputIsTerminal ? length + 1 : length
        secret.withUnsafeMutableBytes { bytes in
            if total > length { bytes[length] = 0x0a }
            _ = try? FileDescriptor.standardOutput.writeAll(UnsafeRawBufferPointer(rebasing: bytes[..<total]))
        }
        return ExitCode.ok.rawValue
    }
}
