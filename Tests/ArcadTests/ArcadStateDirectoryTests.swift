import ArcaClient
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Testing

/// The state directory: one arcad per directory, nothing used that is not
/// root's own, and a first start that a crash cannot leave half-done.
@Suite("arcad binary: state directory (root)", .serialized)
struct ArcadStateDirectoryTests {
    /// Runs arcad with `arguments` until it exits (at most `seconds`): its exit
    /// status (nil if it was still running and got killed) and its stderr.
    func runArcad(_ arguments: [String], seconds: Double = 20) throws -> (status: Int32?, stderr: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: builtExecutable("arcad"))
        p.arguments = arguments
        // A file, not a pipe: a detached arcad would keep a pipe open for ever.
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("arcad-stderr-\(UUID().uuidString)")
            .path
        FileManager.default.createFile(atPath: log, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: log) }
        p.standardError = FileHandle(forWritingAtPath: log)
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let deadline = Date().addingTimeInterval(seconds)
        while p.isRunning && Date() < deadline { usleep(20_000) }
        let finished = !p.isRunning
        if !finished { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        return (finished ? p.terminationStatus : nil, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    func foreground(_ state: String, _ socket: String) -> [String] {
        ["--foreground", "--config", "/dev/null", "--state-dir", state, "--socket", socket]
    }

    func refusal(_ path: String, _ why: String) -> String {
        "arcad: cannot start: refusing \(path): it \(why); it must be root's own (chown root, chmod go-w)\n"
    }

    func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("arcad-state-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("a second arcad on the same state directory exits 1 naming the first one's pid; the first keeps serving")
    func singleInstance() throws {
        let arcad = try ArcadProcess()
        defer { arcad.stop() }
        let state = arcad.directory + "/state"
        let first = try #require(arcad.process?.processIdentifier)
        #expect(try String(contentsOfFile: state + "/arcad.lock", encoding: .utf8) == "\(first)\n")
        let message = "arcad: cannot start: another arcad (pid \(first)) is using the state directory \(state)\n"
        // On the first one's own socket: before the lock, the second unlinked it and took over.
        let second = try runArcad(foreground(state, arcad.socket))
        #expect(second.status == 1)
        #expect(second.stderr == message)
        // In daemon mode the refusal comes before detaching, from the process that was started.
        let detached = try runArcad([
            "--config", "/dev/null", "--state-dir", state, "--socket", arcad.directory + "/2.sock",
        ])
        #expect(detached.status == 1)
        #expect(detached.stderr == message)
        #expect(!FileManager.default.fileExists(atPath: arcad.directory + "/2.sock"))
        // The first one still serves, on the socket it bound.
        #expect(try arcad.send(.status(uid: nil)) == emptyRootStatus)
        #expect(arcad.process?.isRunning == true)
    }

    @Test("a detached arcad records its own pid (not its parent's) in the lock")
    func detachedHolderPid() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = directory + "/state"
        // posix_spawn, not Foundation's Process: Process learns that its child ended when
        // a descriptor it shares closes, and the detached arcad would keep it open.
        let arguments: [String] = [
            builtExecutable("arcad"), "--config", "/dev/null", "--state-dir", state, "--socket",
            directory + "/a.sock",
        ]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var parent: pid_t = 0
        #expect(posix_spawn(&parent, arguments[0], nil, nil, argv, environ) == 0)
        var status: Int32 = 0
        #expect(waitpid(parent, &status, 0) == parent)
        #expect(status == 0, "the parent exits 0 once arcad serves (wait status \(status))")
        let text = try String(contentsOfFile: state + "/arcad.lock", encoding: .utf8)
        let pid = try #require(Int32(text.trimmingCharacters(in: .newlines)))
        defer { kill(pid, SIGKILL) }
        let command = try String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)
        #expect(command.hasPrefix(builtExecutable("arcad") + "\0"))
        #expect(
            try runArcad(foreground(state, directory + "/b.sock")).stderr
                == "arcad: cannot start: another arcad (pid \(pid)) is using the state directory \(state)\n")
    }

    @Test("a state directory or file not root's own, writable by others, or a symlink is refused")
    func ownershipAndTypes() throws {
        try withThrowawayUsers(1, prefix: "serverst") { users in
            let user = users[0]
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let socket = directory + "/arcad.sock"
            // A complete state directory from one good start, copied for each case.
            let good = directory + "/good"
            let made = try startAndWait(state: good, socket: socket)
            kill(made.processIdentifier, SIGKILL)
            made.waitUntilExit()
            var index = 0
            func attempt(_ damage: (String) throws -> Void) throws -> (status: Int32?, stderr: String, state: String) {
                index += 1
                let state = directory + "/case\(index)"
                try #require(run(["cp", "-a", good, state]).status == 0)
                try damage(state)
                let result = try runArcad(foreground(state, socket), seconds: 10)
                return (result.status, result.stderr, state)
            }
            func chown(_ path: String) throws { try #require(run(["chown", "-h", "\(user.uid)", path]).status == 0) }
            func chmod(_ mode: String, _ path: String) throws { try #require(run(["chmod", mode, path]).status == 0) }
            func symlink(_ path: String) throws {
                try #require(run(["mv", path, path + ".real"]).status == 0)
                try #require(run(["ln", "-s", path + ".real", path]).status == 0)
            }

            var r = try attempt { try chown($0) }
            #expect(r.status == 1 && r.stderr == refusal(r.state, "is owned by uid \(user.uid), not root"), "\(r)")
            r = try attempt { try chmod("0777", $0) }
            #expect(r.status == 1 && r.stderr == refusal(r.state, "is writable by group or others (mode 777)"), "\(r)")
            r = try attempt { try symlink($0) }
            #expect(r.status == 1 && r.stderr == refusal(r.state, "is a symlink"), "\(r)")
            r = try attempt { try symlink($0 + "/users") }
            #expect(r.status == 1 && r.stderr == refusal(r.state + "/users", "is a symlink"), "\(r)")
            r = try attempt { try symlink($0 + "/host.key") }
            #expect(r.status == 1 && r.stderr == refusal(r.state + "/host.key", "is a symlink"), "\(r)")
            r = try attempt { try chown($0 + "/host.key") }
            #expect(
                r.status == 1 && r.stderr == refusal(r.state + "/host.key", "is owned by uid \(user.uid), not root"))
            r = try attempt { try chmod("0620", $0 + "/host.key") }
            #expect(
                r.status == 1 && r.stderr == refusal(r.state + "/host.key", "is writable by group or others (mode 620)")
            )
            r = try attempt { try chmod("0640", $0 + "/host.key") }
            #expect(
                r.status == 1 && r.stderr == refusal(r.state + "/host.key", "is readable by group or others (mode 640)")
            )
            r = try attempt { try symlink($0 + "/system.db") }
            #expect(r.status == 1 && r.stderr == refusal(r.state + "/system.db", "is a symlink"), "\(r)")
            r = try attempt { try chown($0 + "/arcad.lock") }
            #expect(
                r.status == 1 && r.stderr == refusal(r.state + "/arcad.lock", "is owned by uid \(user.uid), not root"))
            r = try attempt { try FileManager.default.removeItem(atPath: $0 + "/host.key") }
            #expect(
                r.status == 1
                    && r.stderr == "arcad: cannot start: \(r.state)/system.db exists but "
                        + "\(r.state)/host.key is missing; restore host.key\n",
                "\(r)")

            // A user's vault that is a symlink is refused when it is first opened.
            index += 1
            let state = directory + "/case\(index)"
            try #require(run(["cp", "-a", good, state]).status == 0)
            try #require(run(["ln", "-s", "/etc/passwd", state + "/users/\(user.uid).db"]).status == 0)
            let arcad = Process()
            arcad.executableURL = URL(fileURLWithPath: builtExecutable("arcad"))
            arcad.arguments = foreground(state, socket)
            arcad.standardError = FileHandle.nullDevice
            try arcad.run()
            defer {
                kill(arcad.processIdentifier, SIGKILL)
                arcad.waitUntilExit()
            }
            var reply: Reply?
            for _ in 0..<200 where reply == nil {
                reply = try? ArcadClient(path: socket, timeoutMilliseconds: 2000).send(.kdfParameters(uid: user.uid))
                if reply == nil { usleep(25_000) }
            }
            let path = state + "/users/\(user.uid).db"
            #expect(
                reply
                    == .error(
                        status: .notAvailable,
                        message:
                            "refusing \(path): it is a symlink; it must be root's own (chown root, chmod go-w)"))
        }
    }

    @Test("SIGKILL at random points of a first start: no host.key and no system.db, or both usable (50 runs)")
    func crashDuringFirstStart() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = directory + "/arcad.sock"
        // The kill points: the n-th call of one of the file system calls a first start
        // makes, chosen at random; strace delivers SIGKILL there (a timer alone lands
        // before or after the few milliseconds that matter almost every time).
        let calls = ["openat", "write", "pwrite64", "fsync", "fdatasync", "rename", "unlink", "ftruncate"]
        let profile = directory + "/profile"
        try stopTraced(
            try startTraced(
                ["-o", profile, "-e", "trace=" + calls.joined(separator: ",")],
                state: directory + "/profiled", socket: socket))
        let trace = try String(contentsOfFile: profile, encoding: .utf8).split(separator: "\n")
        let counts = Dictionary(
            uniqueKeysWithValues: calls.map { call in
                (call, trace.filter { $0.contains(" \(call)(") }.count)
            })
        #expect(counts["rename"] == 2 && counts["fsync", default: 0] >= 4, "\(counts)")
        var outcomes: [String: Int] = [:]
        for run in 0..<50 {
            let state = directory + "/run\(run)"
            let call = calls.randomElement() ?? "openat"
            let n = Int.random(in: 1...max(1, counts[call, default: 1]))
            try stopTraced(
                try startTraced(
                    ["-o", "/dev/null", "-e", "trace=\(call)", "-e", "inject=\(call):signal=SIGKILL:when=\(n)"],
                    state: state, socket: socket))

            let hostKey = try? FileManager.default.attributesOfItem(atPath: state + "/host.key")
            let systemDB = FileManager.default.fileExists(atPath: state + "/system.db")
            if let hostKey {
                #expect(hostKey[.size] as? Int == 32, "run \(run) (\(call) #\(n)): a partial host.key")
                #expect(hostKey[.posixPermissions] as? Int == 0o600)
            }
            #expect(!(systemDB && hostKey == nil), "run \(run) (\(call) #\(n)): system.db without host.key")
            outcomes[
                hostKey == nil ? (systemDB ? "system.db only" : "neither") : (systemDB ? "both" : "host.key only"),
                default: 0] += 1

            // Usable: arcad starts on what is left, and system.db opens and keeps an item.
            let restarted = try startAndWait(state: state, socket: socket)
            defer {
                kill(restarted.processIdentifier, SIGKILL)
                restarted.waitUntilExit()
            }
            let client = try ArcadClient(path: socket, timeoutMilliseconds: 5000)
            let attributes: AttributeMap = [.service: .string("crash"), .account: .string("\(run)")]
            #expect(
                try client.send(
                    .add(
                        AddRequest(
                            vault: .system, itemClass: .genericPassword, attributes: attributes,
                            secret: Array("kept".utf8))))
                    == .items([]), "run \(run) (\(call) #\(n))")
            #expect(
                try client.send(
                    .copyMatching(
                        vault: .system,
                        query: Query(
                            itemClass: .genericPassword, attributes: attributes, returnFlags: .data)))
                    == .items([ResultItem(attributes: [:], data: Array("kept".utf8))]), "run \(run) (\(call) #\(n))")
        }
        print("first start killed at random system calls, 50 runs: \(outcomes) (profile \(counts))")
        #expect(outcomes["system.db only"] == nil)
    }

    /// arcad under strace (`options`), until it is killed or its socket answers (the
    /// start is complete), at most 20 s.
    func startTraced(_ options: [String], state: String, socket: String) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
        p.arguments = ["-f", "-qq"] + options + [builtExecutable("arcad")] + foreground(state, socket)
        p.standardError = FileHandle.nullDevice
        try p.run()
        for _ in 0..<1000 where p.isRunning {
            if let client = try? ArcadClient(path: socket, timeoutMilliseconds: 1000),
                (try? client.send(.status(uid: nil))) != nil
            {
                break
            }
            usleep(20_000)
        }
        return p
    }

    /// Kills the traced arcad (strace's child, by pid) and waits for strace.
    func stopTraced(_ strace: Process) throws {
        let children =
            (try? String(
                contentsOfFile: "/proc/\(strace.processIdentifier)/task/\(strace.processIdentifier)/children",
                encoding: .utf8)) ?? ""
        for pid in children.split(separator: " ").compactMap({ Int32($0) }) { kill(pid, SIGKILL) }
        strace.waitUntilExit()
    }

    /// Starts arcad in the foreground and waits until its socket answers.
    func startAndWait(state: String, socket: String) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: builtExecutable("arcad"))
        p.arguments = foreground(state, socket)
        p.standardError = FileHandle.nullDevice
        try p.run()
        for _ in 0..<400 {
            if p.isRunning, let client = try? ArcadClient(path: socket, timeoutMilliseconds: 1000),
                (try? client.send(.status(uid: nil))) != nil
            {
                return p
            }
            if !p.isRunning { break }
            usleep(10_000)
        }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        throw TestSupportError("arcad did not start on \(state) (exit \(p.terminationStatus))")
    }
}
