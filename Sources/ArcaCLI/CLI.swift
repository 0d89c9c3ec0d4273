import ArcaClient
import ArcaProtocol
import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The `arca` tool: parse, validate, run, and map the outcome to an exit status.
public enum CLI {
    /// Runs `arguments` (without the program name), writing into `output`;
    /// returns the exit status. Nothing is executed unless the whole command
    /// line is valid.
    public static func run(_ arguments: [String], output: inout Output, input: SecretInput = SecretInput())
        -> Int32
    {
        let command: Command
        let socket: String?
        do {
            let parsed = try Parser.parse(arguments)
            socket = parsed.socket
            command = try Validation.validate(parsed)
        } catch {
            output.errorLine("error: " + error.message)
            output.errorLine(Help.usageLine(for: error.verb))
            return ExitCode.usage.rawValue
        }
        var context = Context(
            socketPath: socket ?? ArcadClient.environmentSocketPath, uid: getuid(), input: input)
        do {
            try context.execute(command, output: &output)
            return ExitCode.ok.rawValue
        } catch {
            output.errorLine(error.message)
            return error.exitCode.rawValue
        }
    }

    /// The process entry point used by `arca`'s `main.swift`: runs, writes the
    /// two streams, wipes them, and returns the exit status.
    public static func main() -> Int32 {
        // `get -s … -a …` of an item in the kernel, before the table and parser are built.
        if let status = QuickGet.run() { return status }
        var output = Output(standardOutputIsTerminal: Terminal.standardOutputIsTerminal)
        let arguments = Array(CommandLine.arguments.dropFirst())
        // Only the process hands over (exec): an in-process run must never replace its caller.
        let status =
            HandOver.matching(arguments).map { $0.handOver.run($0.arguments, output: &output) }
            ?? run(arguments, output: &output)
        writeAll(1, output.standardOutput)
        writeAll(2, output.standardError)
        output.wipe()
        return status
    }

    /// Writes all of `bytes`; a closed or failing stream is ignored (nothing else
    /// to tell). The corresponding C function is `write`.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { raw in try? FileDescriptor(rawValue: fd).writeAll(raw) }
    }
}

/// Where a command runs: the socket, the caller's uid, stdin. The connection
/// to arcad is opened on first use, so `get` from the kernel never touches it.
struct Context {
    let socketPath: String
    let uid: UInt32
    let input: SecretInput
    private var client: ArcadClient?
    /// How long a reply may take, set before the first request (sealing or merging a large
    /// backup takes longer than the usual few seconds).
    var timeoutMilliseconds = 5_000

    init(socketPath: String, uid: UInt32, input: SecretInput) {
        self.socketPath = socketPath
        self.uid = uid
        self.input = input
    }

    /// Sends `request`; an error reply or an unreachable arcad becomes a ``CLIError``
    /// naming `what`.
    mutating func send(_ request: Request, what: String) throws(CLIError) -> Reply {
        let connection: ArcadClient
        if let client {
            connection = client
        } else {
            do { connection = try ArcadClient(path: socketPath, timeoutMilliseconds: timeoutMilliseconds) } catch {
                throw CLIError.request(error, what: what)
            }
            client = connection
        }
        let reply: Reply
        do { reply = try connection.send(request) } catch {
            throw CLIError.request(error, what: what)
        }
        if case .error(let status, let message) = reply {
            throw CLIError.reply(status, message: message, what: what)
        }
        return reply
    }

    /// Closes the connection to arcad, if one is open; the next ``send(_:what:)`` opens a new one.
    /// arcad closes a connection that sends no request within its client_timeout_ms (5 s by
    /// default), so a verb calls this after a request and before a local step that can outlast
    /// that (a prompt, a key calibration or derivation), instead of retrying a request arcad
    /// may have carried out.
    mutating func disconnect() { client = nil }

    mutating func execute(_ command: Command, output: inout Output) throws(CLIError) {
        switch command {
        case .help(let verb):
            if let verb, let spec = CommandTable.verb(named: verb) {
                output.line(Help.verb(spec))
            } else {
                output.line(Help.overview())
            }
        case .version(let json):
            if json {
                var writer = JSONWriter()
                writer.beginObject()
                writer.key("version")
                writer.string(ArcaVersion.release)
                writer.endObject()
                writer.flush(into: &output)
            } else {
                output.line("arca " + ArcaVersion.release)
            }
        case .initVault(let showRecoveryKey): try initVault(showRecoveryKey: showRecoveryKey, output: &output)
        case .add(let item, let secret, let replace, let compatibility):
            try add(item, secret: secret, replaceExisting: replace, compatibility: compatibility, output: &output)
        case .get(let item, let useKernel, let json): try get(item, useKernel: useKernel, json: json, output: &output)
        case .find(let item, let showSecrets, let json):
            try find(item, showSecrets: showSecrets, json: json, output: &output)
        case .update(let item, let secret): try update(item, secret: secret, output: &output)
        case .delete(let item, let compatibility): try delete(item, compatibility: compatibility, output: &output)
        case .clear: try clear()
        case .lock(let all): try lock(all: all)
        case .unlock(let source): try unlock(source, output: &output)
        case .status(let json, let user): try status(json: json, user: user, output: &output)
        case .passwd(let resync, let recover): try passwd(resync: resync, recover: recover, output: &output)
        case .recovery(let rotate, let json): try recovery(rotate: rotate, json: json, output: &output)
        case .show(let json): try show(json: json, output: &output)
        case .systemAdd(let item, let grants, let replace):
            try systemAdd(item, grants: grants, replaceExisting: replace, output: &output)
        case .systemGet(let item, let useKernel, let json):
            try systemGet(item, useKernel: useKernel, json: json, output: &output)
        case .systemDelete(let item): try systemDelete(item)
        case .grant(let item, let principals, let revoke): try grant(item, principals: principals, revoke: revoke)
        case .grants(let json): try grants(json: json, output: &output)
        case .compatibilityFind(let item, let passwordOnly, let passwordOnStderr):
            try compatibilityFind(item, passwordOnly: passwordOnly, passwordOnStderr: passwordOnStderr, output: &output)
        case .action(let action): try action.run(&self, &output)
        }
    }
}
