import ArcaProtocol
import ArcaSync
import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The verbs of arca-sync(1), also reached as `arca sync VERB` (`arca sync init` stays in arca).
public enum SyncCLI {
    /// The usage text (`--help`).
    public static let usage = """
        usage: arca sync VERB [options]     (or arca-sync VERB ...)
          join ID@SYNCTHING-ID [--address ADDR]
                                  join the circle of the device given (as its `arca sync status` prints it):
                                  prints this device and the 6-digit code to compare on that device
          approve ID@SYNCTHING-ID [--address ADDR] [--sas CODE --yes]
                                  on a member: check the code, admit the joining device, share the folder
          remove ID               drop a device from the circle (new epoch key); lists what it has seen
          status [--json]         this device, the circle's devices (active, dormant since, removed), pending
                                  records (waiting, expired), conflicts, reports
          recover                 every device lost: on a fresh one, the recovery key (stdin) opens the
                                  circle's recovery seal in the synced folder; this device takes it over
          run                     the agent: carries ciphertext between the synced folder and arcad
        options:
          --syncthing-home DIR    Syncthing's directory with config.xml (REST address and API key)
                                  (default: $XDG_STATE_HOME/syncthing, then ~/.config/syncthing)
          --folder DIR            the synced folder (default: Syncthing's folder arca-sync, else
                                  ~/.local/share/arca/sync)
          --socket PATH           arcad's socket (default: $ARCA_SOCKET, else \(ArcadSocket.defaultPath))
          --address ADDR          the other device's Syncthing address (default: dynamic, i.e. discovery)
        exit status: 0 ok, 2 usage, 3 Syncthing, 4 arcad, 5 folder, 6 not confirmed or wrong recovery key
        """

    /// The Syncthing folder id every device of a circle shares.
    public static let folderID = "arca-sync"

    /// Runs `arguments` (without the program name); returns the exit status.
    public static func main(_ arguments: [String]) -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        do {
            let options = try SyncOptions.parse(arguments)
            if options.flags.contains("help") || options.verb == "help" {
                Console.out(usage + "\n")
                return 0
            }
            try execute(options)
            return 0
        } catch {
            Console.err("arca sync: \(error.description)\n")
            if case .usage = error { Console.err(usage + "\n") }
            return error.exitCode
        }
    }

    static func execute(_ options: SyncOptions) throws(SyncAgentError) {
        let setup = try SyncSetup(options)
        guard let verb = SyncVerb.named(options.verb) else { throw .usage("unknown verb \(options.verb)") }
        try verb.run(setup, options)
    }
}

/// One verb of arca-sync: its name, the options it takes besides the common ones, whether it
/// takes one device, and its handler. `SyncOptions.parse` validates against the row and
/// `SyncCLI.execute` runs it, so a verb lives in one place (as the `arca` CLI's command table).
struct SyncVerb: Sendable {
    let name: String
    let options: Set<String>
    let takesDevice: Bool
    let run: @Sendable (SyncSetup, SyncOptions) throws(SyncAgentError) -> Void

    /// Every verb, in the order of the usage text.
    static let all: [SyncVerb] = [
        SyncVerb(name: "join", options: ["address"], takesDevice: true) { setup, options throws(SyncAgentError) in
            try setup.join(try DeviceAddress(parsing: options.positionals[0]), address: options.values["address"])
        },
        SyncVerb(name: "approve", options: ["address", "sas", "yes"], takesDevice: true) {
            setup, options throws(SyncAgentError) in
            try setup.approve(
                try DeviceAddress(parsing: options.positionals[0]), address: options.values["address"],
                sas: options.values["sas"], yes: options.flags.contains("yes"))
        },
        SyncVerb(name: "remove", options: ["yes"], takesDevice: true) { setup, options throws(SyncAgentError) in
            try setup.remove(options.positionals[0])
        },
        SyncVerb(name: "status", options: ["json"], takesDevice: false) { setup, options throws(SyncAgentError) in
            try setup.status(json: options.flags.contains("json"))
        },
        SyncVerb(name: "recover", options: [], takesDevice: false) { setup, _ throws(SyncAgentError) in
            try setup.recover()
        },
        SyncVerb(name: "run", options: [], takesDevice: false) { setup, _ throws(SyncAgentError) in try setup.run() },
    ]

    /// The row of `name`, or nil.
    static func named(_ name: String) -> SyncVerb? { all.first { $0.name == name } }
}

/// Writes to stdout/stderr without buffering (the agent's log lines reach journald at once).
enum Console {
    static func out(_ text: String) { try? FileDescriptor.standardOutput.writeAll(text) }
    static func err(_ text: String) { try? FileDescriptor.standardError.writeAll(text) }

    /// One line from stdin (for approve's confirmation), or nil at end of input.
    static func readLine() -> String? { Swift.readLine() }

    /// Whether stdin is a terminal.
    static var interactive: Bool { isatty(0) == 1 }
}
