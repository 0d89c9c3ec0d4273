import ArcaClient
import ArcaProtocol
import ArcaSecretService
import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// arca-secretd [--replace] [--verbose] [--socket PATH]: the freedesktop Secret
/// Service on the user's session bus, backed by arcad; `arca-secretd --import ...`
/// copies another provider's items into the vault (ImportCommand). See arca-secretd(1).
func fail(_ text: String, code: Int32) -> Never {
    try? FileDescriptor.standardError.writeAll("arca-secretd: \(text)\n")
    exit(code)
}

let usage = "usage: arca-secretd [--replace] [--verbose] [--socket PATH]\n       arca-secretd --import [options]"
if CommandLine.arguments.dropFirst().first == "--import" {
    ImportCommand.run(Array(CommandLine.arguments.dropFirst(2)))
}
var replace = false
var verbose = false
var socketPath = ArcadClient.environmentSocketPath
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--replace": replace = true
    case "--verbose": verbose = true
    case "--socket":
        guard let value = arguments.popFirst() else { fail("--socket needs a path\n\(usage)", code: 2) }
        socketPath = value
    case "--help", "-h":
        print(usage)
        print("Serves org.freedesktop.secrets on the session bus from your Arca vault (arcad).")
        exit(0)
    case "--version":
        print("arca-secretd \(ArcaVersion.release)")
        exit(0)
    default: fail("unknown option \(argument)\n\(usage)", code: 2)
    }
}

do {
    let service = try SecretService(uid: getuid(), socketPath: socketPath, verbose: verbose)
    let reason = try service.run(replace: replace)
    fail(reason, code: 0)
} catch let error as SecretService.StartError {
    fail("\(error)", code: 1)
} catch {
    fail("cannot start: \(error)", code: 1)
}
