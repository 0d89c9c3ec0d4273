import ArcaKeyring
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Testing

/// The real arcad binary on a private bus with the fake logind, a throwaway
/// user, and the kernel keyring read as that user. Root only; fails loudly otherwise.
@Suite("logind end to end (root, private bus, arcad binary, real kernel)", .serialized)
struct LogindEndToEndTests {
    @Test("LockedHint=true removes whenUnlocked; only the user's unlock brings it back")
    func lockUnlock() throws {
        try withLogindWorld(sessions: { ["1:\($0)"] }) { w in
            #expect(w.whenUnlocked == "secret-wu")
            #expect(w.afterFirstUnlock == "secret-afu")
            let logind = try #require(w.logind)

            try logind.send("lock 1")
            #expect(w.eventually { w.whenUnlocked == "gone" })
            #expect(w.afterFirstUnlock == "secret-afu")
            let logged = w.arcad.logLines(containing: "uid \(w.user.uid): screen locked (logind), whenUnlocked removed")
            #expect(logged.count == 1)

            // The screen reports itself unlocked: that alone brings nothing back.
            try logind.send("unlock 1")
            usleep(200_000)
            #expect(w.whenUnlocked == "gone")
            // The locker's PAM auth (as the user) unlocks: back.
            #expect(try w.userUnlocks() == "ok")
            #expect(w.whenUnlocked == "secret-wu")

            // Again, with LockedHint only invalidated (the watcher reads it back).
            try logind.send("invalidate 1")
            #expect(w.eventually { w.whenUnlocked == "gone" })
            #expect(try w.unlockWithKey() == .ok)
            #expect(w.whenUnlocked == "secret-wu")
            try logind.send("unlock 1")

            // A session that appears already locked locks; a user who is someone else's does not.
            try logind.send("add 2 \(w.user.uid + 50_000)")
            try logind.send("lock 2")
            usleep(200_000)
            #expect(w.whenUnlocked == "secret-wu")
            try logind.send("add 3 \(w.user.uid) locked")
            #expect(w.eventually { w.whenUnlocked == "gone" })
            #expect(w.afterFirstUnlock == "secret-afu")
        }
    }

    @Test("logind leaves the bus and comes back: arcad serves meanwhile and follows the new logind")
    func logindRestarts() throws {
        try withLogindWorld(sessions: { ["1:\($0)"] }) { w in
            w.logind?.quit()
            w.logind = nil
            #expect(w.eventually { !w.arcad.logLines(containing: "logind left the system bus").isEmpty })
            #expect(try w.arcad.send(.status(uid: w.user.uid)) != .error(status: .notAvailable, message: ""))
            #expect(w.whenUnlocked == "secret-wu")

            // The new logind starts with the user's screen locked.
            w.logind = try FakeLogind(bus: w.bus, sessions: ["7:\(w.user.uid):locked"])
            #expect(w.eventually { w.whenUnlocked == "gone" })
            #expect(w.arcad.logLines(containing: "logind appeared on the system bus").count == 1)
            #expect(try w.unlockWithKey() == .ok)
            try w.logind?.send("unlock 7")
            try w.logind?.send("lock 7")
            #expect(w.eventually { w.whenUnlocked == "gone" })
            #expect(w.afterFirstUnlock == "secret-afu")
        }
    }

    @Test("lock_on = all: two sessions, both must be locked; the end of the unlocked one locks")
    func allPolicy() throws {
        try withLogindWorld(config: "lock_on = all\n", sessions: { ["1:\($0)", "2:\($0)"] }) { w in
            let logind = try #require(w.logind)
            try logind.send("lock 1")
            usleep(300_000)
            #expect(w.whenUnlocked == "secret-wu")
            try logind.send("lock 2")
            #expect(w.eventually { w.whenUnlocked == "gone" })
            #expect(try w.unlockWithKey() == .ok)
            try logind.send("unlock 2")
            usleep(200_000)
            #expect(w.whenUnlocked == "secret-wu")
            try logind.send("remove 2")
            #expect(w.eventually { w.whenUnlocked == "gone" })
            #expect(w.afterFirstUnlock == "secret-afu")
        }
    }

    @Test("PrepareForSleep(true) locks with lock_on_suspend = yes (the default)")
    func suspendLocks() throws {
        try withLogindWorld(sessions: { ["1:\($0)"] }) { w in
            try w.logind?.send("sleep 0")
            usleep(200_000)
            #expect(w.whenUnlocked == "secret-wu")
            try w.logind?.send("sleep 1")
            #expect(w.eventually { w.whenUnlocked == "gone" })
            #expect(w.afterFirstUnlock == "secret-afu")
            #expect(w.arcad.logLines(containing: "uid \(w.user.uid): suspend, whenUnlocked removed").count == 1)
        }
    }

    @Test("suspend: a sleep delay inhibitor, closed only once whenUnlocked is out of the kernel, taken again on wake")
    func suspendInhibitor() throws {
        try withLogindWorld(sessions: { ["1:\($0)"] }) { w in
            let logind = try #require(w.logind)
            #expect(w.eventually { (try? logind.inhibitors()) == 1 })
            // The double looks at the user's key in /proc/keys the moment the
            // inhibitor closes, before anything else: it must be gone by then.
            let key = try #require(serial(of: w.wuDescription))
            #expect(try logind.answer("watch-key \(key)") == "ok live")
            try logind.send("sleep 1")
            #expect(try logind.waitRelease() == "gone")
            #expect(w.whenUnlocked == "gone")
            #expect(w.afterFirstUnlock == "secret-afu")
            #expect(try logind.inhibitors() == 0)
            // Waking up: a new inhibitor for the next suspend, and it works again.
            try logind.send("sleep 0")
            #expect(w.eventually { (try? logind.inhibitors()) == 1 })
            #expect(try w.unlockWithKey() == .ok)
            #expect(w.whenUnlocked == "secret-wu")
            let again = try #require(serial(of: w.wuDescription))
            #expect(try logind.answer("watch-key \(again)") == "ok live")
            try logind.send("sleep 1")
            #expect(try logind.waitRelease() == "gone")
            #expect(w.whenUnlocked == "gone")
            #expect(w.arcad.logLines(containing: "uid \(w.user.uid): suspend, whenUnlocked removed").count == 2)
        }
    }

    @Test("a session opened from within a logind session ends with it (SessionRemoved), its opener still alive")
    func sessionEndsWithLogindSession() throws {
        let id = "f" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
        let scope = try LogindScope(sessionID: id)
        defer { scope.remove() }
        try withLogindWorld(sessions: { _ in [] }) { w in
            let logind = try #require(w.logind)
            try logind.send("add \(id) \(w.user.uid)")
            // The opener: root, in the cgroup of logind session `id`, alive throughout.
            let opener = Process()
            opener.executableURL = URL(fileURLWithPath: "/bin/sh")
            opener.arguments = [
                "-c",
                "echo $$ > \(scope.directory)/cgroup.procs && exec \(builtExecutable("arcad-probe")) "
                    + "\(w.arcad.socket) open-session \(w.user.uid)",
            ]
            let input = Pipe()
            let output = Pipe()
            opener.standardInput = input
            opener.standardOutput = output
            try opener.run()
            defer {
                try? input.fileHandleForWriting.close()
                reap(opener)
            }
            #expect(LineReader(output.fileHandleForReading).line() == "ok")
            #expect(try w.sessionCount() == 1)
            #expect(w.whenUnlocked == "secret-wu")
            // A session of another id ending changes nothing.
            try logind.send("add \(id)x \(w.user.uid)")
            try logind.send("remove \(id)x")
            usleep(300_000)
            #expect(try w.sessionCount() == 1)
            try logind.send("remove \(id)")
            #expect(w.eventually { (try? w.sessionCount()) == 0 })
            #expect(w.whenUnlocked == "gone")
            #expect(w.afterFirstUnlock == "secret-afu")
            #expect(opener.isRunning)
            #expect(
                w.arcad.logLines(containing: "ended without closing: its logind session \(id) ended (0 open)")
                    .count == 1)
        }
    }

    @Test("PrepareForSleep(true) leaves whenUnlocked with lock_on_suspend = no")
    func suspendKeeps() throws {
        try withLogindWorld(config: "lock_on_suspend = no\n", sessions: { ["1:\($0)"] }) { w in
            try w.logind?.send("sleep 1")
            usleep(500_000)
            #expect(w.whenUnlocked == "secret-wu")
            // Nothing to do before a suspend: no inhibitor delays it.
            #expect(try w.logind?.inhibitors() == 0)
            // The screen lock itself still counts.
            try w.logind?.send("lock 1")
            #expect(w.eventually { w.whenUnlocked == "gone" })
        }
    }

    @Test("without a system bus arcad serves, says so once, and picks the bus up when it appears")
    func noBusThenBus() throws {
        try withThrowawayUsers(1, prefix: "arcal", cleanup: { _ = KeyringLayout().purge(user: $0.uid) }) { users in
            let user = users[0]
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("arca-logind-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let arcad = try ArcadProcess(busAddress: "unix:path=\(directory)/system_bus_socket", config: "")
            defer { arcad.stop() }
            let enroll = Request.enroll(uid: user.uid, key: try logindDerive("pw"), parameters: logindParameters)
            #expect(try arcad.send(enroll) == .ok)
            // Two retry periods (5 s each) pass without a bus: one log line.
            sleep(11)
            #expect(arcad.logLines(containing: "no system bus").count == 1)
            #expect(try arcad.whenUnlockedLoaded(user.uid))

            let bus = try PrivateBus(directory: directory)
            defer { bus.stop() }
            let logind = try FakeLogind(bus: bus, sessions: ["1:\(user.uid)"])
            defer { logind.quit() }
            // The next retry connects.
            #expect(
                try (0..<160).contains { _ in
                    usleep(50_000)
                    return !arcad.logLines(containing: "logind: following 1 session").isEmpty
                })
            try logind.send("lock 1")
            #expect(
                try (0..<100).contains { _ in
                    usleep(20_000)
                    return try !arcad.whenUnlockedLoaded(user.uid)
                })
        }
    }
}
