import ArcaCrypto
import ArcaProtocol
import ArcaSystem
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The verbs of arca-fleetd(8), also reached as `arca fleet VERB`.
public enum FleetCLI {
    /// The usage text (`--help`).
    public static let usage = """
        usage: arca fleet [--conf PATH] VERB [options]     (or arca-fleetd ...)
          init [--manifest-lifetime SECONDS]        create the admin key and the fleet head
          join --host NAME --admin-key KEY          create this host's keys, publish them, pin the admin key
          hosts [--json]                            list approved hosts and pending joins
          approve HOST... --group GROUPS            approve joined hosts into groups (comma-separated)
          remove HOST                               revoke everything on HOST and drop it from its groups
          put --group G -s SERVICE -a ACCOUNT [--allow-user U] [--allow-group G] [--allow-unit UNIT[:ID]]
                                                    add a fleet item; the secret is read from stdin
          rotate -s SERVICE -a ACCOUNT [--group G] [--allow-...]
                                                    a new version from stdin; the previous one is kept
          revoke -s SERVICE -a ACCOUNT              remove an item from every host
          refresh                                   re-sign every manifest (extends not-after)
          status [--json] [--local]                 per host: applied seq, revision, last seen, errors
          run                                       the host agent (arca-fleetd.service)
        """

    /// Runs `arguments` (without the program name); returns the exit status.
    public static func main(_ arguments: [String]) -> Int32 {
        // etcdctl may exit (member unreachable) before reading the stdin we write to it:
        // that must be an EPIPE for ChildProcess, not a SIGPIPE that kills the agent.
        signal(SIGPIPE, SIG_IGN)
        do {
            try execute(arguments)
            return 0
        } catch {
            write(2, "arca fleet: \(error.description)\n")
            if case .usage = error { write(2, usage + "\n") }
            return error.exitCode
        }
    }

    /// Writes all of `text` to `fd` (1 or 2); a failed write is dropped, as there is nowhere to report it.
    static func write(_ fd: Int32, _ text: String) {
        try? FileDescriptor(rawValue: fd).writeAll(text)
    }

    static func execute(_ arguments: [String]) throws(FleetError) {
        var options = try FleetOptions.parse(arguments)
        if options.flags.contains("help") {
            write(1, usage + "\n")
            return
        }
        let configPath = options.value("conf") ?? FleetConfig.defaultPath
        guard let verb = FleetVerb.named(options.verb) else { throw .usage("unknown verb \(options.verb)") }
        try options.refuse(except: (verb.flags, verb.values))
        switch verb.handler {
        case .printsUsage:
            // help takes nothing (an argument or option is refused with exit 2, as other verbs do).
            try options.done()
            write(1, usage + "\n")
        case .writesConfig(let run):
            try run(&options, configPath)
        case .readsConfig(let run):
            let config = try FleetConfig.load(configPath)
            let etcd = EtcdCtl(config.etcd)
            let admin = FleetAdmin(etcd: etcd, layout: config.keys, vault: SystemVault(socket: config.socket))
            try run(&options, FleetVerb.Fleet(config: config, etcd: etcd, admin: admin))
        }
    }

    static func join(_ options: inout FleetOptions, configPath: String) throws(FleetError) {
        let host = try options.required("host")
        let adminKey = try options.required("admin-key")
        try options.done()
        guard FleetName.isValid(host) else { throw .usage("bad host name \(host)") }
        var text = String(decoding: FileIO.read(configPath) ?? [], as: UTF8.self)
        text = FleetConfig.setting("host", to: host, in: text)
        text = FleetConfig.setting("admin_key", to: adminKey, in: text)
        let config = try FleetConfig.parse(text)
        try HostAgent(config: config, etcd: EtcdCtl(config.etcd)).join()
        try FileIO.writeAtomically(configPath, Array(text.utf8))
        write(1, "joined as \(host); waiting for `arca fleet approve \(host) --group ...`\n")
    }

    /// The secret of put/rotate: all of stdin, which must not be a terminal.
    static func readSecret() throws(FleetError) -> SecretBytes {
        guard isatty(0) == 0 else { throw .usage("pipe the secret on stdin") }
        var bytes: [UInt8] = []
        // One allocation up to the kernel's payload limit, so growing never leaves copies behind.
        bytes.reserveCapacity(32_768 + 4096)
        defer { SecureWipe.zero(&bytes) }
        var chunk = [UInt8](repeating: 0, count: 4096)
        defer { SecureWipe.zero(&chunk) }
        while true {
            let read = chunk.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) in try FileDescriptor.standardInput.read(into: raw) }
            }
            guard case .success(let n) = read else { throw .usage("cannot read stdin") }
            if n == 0 { break }
            bytes += chunk[..<n]
        }
        guard !bytes.isEmpty, bytes.count <= 32_767 else { throw .usage("the secret on stdin must be 1-32767 bytes") }
        do { return try SecretBytes(consuming: &bytes) } catch { throw .crypto("\(error)") }
    }
}
