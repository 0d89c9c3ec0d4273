import ArcaCrypto
import ArcaProtocol
import ArcaSystem
import Foundation
import Testing

@testable import ArcaPAM

/// Auth reads the KDF parameters arcad published instead of asking over a connection, and
/// believes only a file root wrote, 0600, in a root-owned directory no one else may write,
/// from a publisher still running. Root (the files are chowned for real; one is written by
/// `nobody` through runuser).
@Suite struct PublishedParametersRootTests {
    static let nobody: UInt32 = 65534
    let published = KeyDerivationParameters(opsLimit: 1, memoryLimit: 64 << 10, salt: [UInt8](repeating: 7, count: 16))

    /// A temporary directory holding a socket path whose publication directory is `<dir>/sock.kdf`.
    final class Place {
        let root: String
        var socket: String { root + "/sock" }
        var directory: String { PublishedKDFParameters.directory(socketPath: socket) }
        var file: String { PublishedKDFParameters.path(socketPath: socket, uid: 1000) }
        init() throws {
            root = NSTemporaryDirectory() + "login16f-published-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
            chmod(root, 0o755)
            mkdir(directory, 0o700)
        }
        deinit { try? FileManager.default.removeItem(atPath: root) }
        func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600) {
            FileManager.default.createFile(atPath: path, contents: Data(bytes))
            chmod(path, mode)
        }
    }

    func file(uid: UInt32 = 1000, pid: UInt32? = nil, startTime: UInt64? = nil) -> [UInt8] {
        let me = UInt32(bitPattern: getpid())
        return PublishedKDFParameters(
            publisherPID: pid ?? me, publisherStartTime: startTime ?? (ProcessStartTime.current ?? 0), uid: uid,
            parameters: published
        ).encoded()
    }

    @Test func aFileRootWroteFromALivePublisherIsBelieved() throws {
        let place = try Place()
        place.write(file(), to: place.file)
        #expect(PublishedParameters.read(socketPath: place.socket, uid: 1000) == published)
        #expect(PublishedParameters.read(socketPath: place.socket, uid: 1001) == nil, "another uid's file: none")
    }

    @Test func ourOwnStartTimeIsField22OfProcStat() throws {
        let text = try String(contentsOfFile: "/proc/self/stat", encoding: .utf8)
        let fields = text[text.index(after: try #require(text.lastIndex(of: ")")))...].split(separator: " ")
        #expect(ProcessStartTime.current == UInt64(fields[19]))
        #expect(ProcessStartTime.of(pid: 0x7FFF_FFFF) == nil)
    }

    /// The attack: a user who can write where arcad publishes writes parameters of their own
    /// choosing (the login would send a key arcad counts as a wrong guess). Written for real by
    /// `nobody`, in a directory it may write.
    @Test func aFileWrittenByAnotherUserIsRefused() throws {
        let place = try Place()
        // nobody writes it in a directory of its own; it is then moved (one link, 0600) into the
        // publication directory, which stays root's 0700: only the owner check can refuse it.
        let drop = place.root + "/drop"
        mkdir(drop, 0o777)
        chmod(drop, 0o777)
        let forged = place.root + "/forged"
        place.write(file(), to: forged, mode: 0o644)
        let copy = Process()
        copy.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
        copy.arguments = [
            "-u", "nobody", "--", "sh", "-c", "cp \"$0\" \"$1\" && chmod 600 \"$1\"", forged, drop + "/1000",
        ]
        try copy.run()
        copy.waitUntilExit()
        #expect(copy.terminationStatus == 0)
        #expect(rename(drop + "/1000", place.file) == 0)
        var st = stat()
        #expect(stat(place.directory, &st) == 0 && st.st_uid == 0 && st.st_mode & 0o7777 == 0o700)
        #expect(stat(place.file, &st) == 0 && st.st_uid == Self.nobody, "the forged file is there, nobody's")
        #expect(PublishedParameters.read(socketPath: place.socket, uid: 1000) == nil)
    }

    @Test func eachOwnershipAndShapeCheckRefusesOnItsOwn() throws {
        // Each case breaks exactly one condition of a believed file.
        do {  // the file is not root's
            let place = try Place()
            place.write(file(), to: place.file)
            chown(place.file, Self.nobody, Self.nobody)
            #expect(PublishedParameters.read(socketPath: place.socket, uid: 1000) == nil)
        }
        do {  // group or others may read or write the file
            let place = try Place()
            place.write(file(), to: place.file, mode: 0o640)
            #expect(PublishedParameters.read(socketPath: place.socket, uid: 1000) == nil)
        }
        do {  // the directory is not root's
            let place = try Place()
            place.write(file(), to: place.file)
            chown(place.directory, Self.nobody, Self.nobody)
            #expect(PublishedParameters.read(socketPath: place.socket, uid: 1000) == nil)
        }
        do {  // others may write the directory
            let place = try Place()
            place.write(file(), to: place.file)
            chmod(place.directory, 0o703)
            #expect(PublishedParameters.read(socketPath: place.socket, uid: 1000) == nil)
        }
        do {  // the file is a symlink to a good one
            let place = try Place()
            place.write(file(), to: place.root + "/elsewhere")
            symlink(place.root + "/elsewhere", place.file)
            #expect(PublishedParameters.read(socketPath: place.socket, uid: 1000) == nil)
        }
        do {  // the directory is a symlink to a good one
            let place = try Place()
            let real = place.root + "/real"
            mkdir(real, 0o700)
            place.write(file(), to: real + "/1000")
            rmdir(place.directory)
            symlink(real, place.directory)
            #expect(PublishedParameters.read(socketPath: place.socket, uid: 1000) == nil)
        }
        do {  // a second hard link (a file root wrote elsewhere, linked in)
            let place = try Place()
            place.write(file(), to: place.file)
            link(place.file, place.root + "/second")
            #expect(PublishedParameters.read(socketPath: place.socket, uid: 1000) == nil)
        }
    }

    @Test func aStaleOrGarbledFileIsIgnored() throws {
        let me = UInt32(bitPattern: getpid())
        let start = try #require(ProcessStartTime.current)
        let cases: [(String, [UInt8])] = [
            ("publisher gone", file(pid: 0x7FFF_FFFF)),
            ("pid reused by another process", file(pid: me, startTime: start + 1)),
            ("another uid's parameters", file(uid: 1001)),
            ("wrong magic", [0] + file().dropFirst()),
            ("truncated", Array(file().dropLast())),
            ("empty", []),
        ]
        for (name, bytes) in cases {
            let place = try Place()
            place.write(bytes, to: place.file)
            #expect(PublishedParameters.read(socketPath: place.socket, uid: 1000) == nil, "\(name)")
        }
        let place = try Place()
        #expect(PublishedParameters.read(socketPath: place.socket, uid: 1000) == nil, "missing")
    }

    @Test func authUsesABelievedFileAndNoConnection() throws {
        let place = try Place()
        place.write(file(), to: place.file)
        let context = FakeContext()
        context.secrets[.authToken] = "pw"
        let arcad = FakeArcad()
        arcad.vault = (published, try key("pw", published))
        #expect(module(context, arcad, ["socket=\(place.socket)"]).run(.authenticate, flags: 0) == ignore)
        #expect(arcad.kinds == [], "no kdfParameters request")
        #expect(module(context, arcad, ["socket=\(place.socket)"]).run(.openSession, flags: 0) == success)
        #expect(arcad.kinds == ["loginUnlockDerived", "openSession"])
        #expect(
            arcad.requests[0] == .loginUnlockDerived(uid: 1000, key: try key("pw", published), parameters: published))
        #expect(context.data[PublishedStash.name] == nil, "the password kept for a re-derive is dropped once used")
        #expect(context.logs == ["info unlocked the vault of alice"])
    }

    /// The attack (a stale copy from a live publisher: root tampering, a failed publish): the
    /// unlock says which parameters the key came from, arcad answers `staleParameters` with the
    /// vault's, and open_session derives again once; no candidate is kept or confirmed (it would
    /// be a key saved under parameters it was not derived with, and a re-wrap to it would lock
    /// the password out).
    @Test func aStaleCopyIsDerivedAgainWithTheVaultsParametersAndLeavesNoCandidate() throws {
        let place = try Place()
        place.write(file(), to: place.file)
        let context = FakeContext()
        context.secrets[.authToken] = "pw"
        let arcad = FakeArcad()
        arcad.vault = (cheapWire, try key("pw", cheapWire))
        #expect(module(context, arcad, ["socket=\(place.socket)"]).run(.authenticate, flags: 0) == ignore)
        #expect(arcad.kinds == [])
        #expect(module(context, arcad, ["socket=\(place.socket)"]).run(.openSession, flags: 0) == success)
        #expect(arcad.kinds == ["loginUnlockDerived", "openSession", "loginUnlock"])
        #expect(
            arcad.requests[0] == .loginUnlockDerived(uid: 1000, key: try key("pw", published), parameters: published))
        #expect(arcad.requests[2] == .loginUnlock(uid: 1000, key: try key("pw", cheapWire)))
        #expect(context.data[CandidateStash.name] == nil && context.data[PublishedStash.name] == nil)
        #expect(
            context.logs == [
                "info the published KDF parameters were stale; derived the key again with the vault's",
                "info unlocked the vault of alice",
            ])

        // unlock_in_auth: the same, in auth.
        let inAuth = FakeContext()
        inAuth.secrets[.authToken] = "pw"
        let arcad2 = FakeArcad()
        arcad2.vault = (cheapWire, try key("pw", cheapWire))
        let options = ["socket=\(place.socket)", "unlock_in_auth"]
        #expect(module(inAuth, arcad2, options).run(.authenticate, flags: 0) == ignore)
        #expect(arcad2.kinds == ["loginUnlockDerived", "loginUnlock"])
        #expect(arcad2.requests[1] == .loginUnlock(uid: 1000, key: try key("pw", cheapWire)))
        #expect(inAuth.data[CandidateStash.name] == nil)
        #expect(module(inAuth, arcad2, options).run(.openSession, flags: 0) == success)
        #expect(arcad2.kinds == ["loginUnlockDerived", "loginUnlock", "openSession"])
    }

    /// A forged file (not root's) is not believed: auth asks arcad and derives with its answer.
    @Test func authAsksArcadWhenTheFileIsForged() throws {
        let place = try Place()
        place.write(file(), to: place.file)
        chown(place.file, Self.nobody, Self.nobody)
        let context = FakeContext()
        context.secrets[.authToken] = "pw"
        let arcad = FakeArcad()
        arcad.vault = (cheapWire, try key("pw", cheapWire))
        #expect(module(context, arcad, ["socket=\(place.socket)"]).run(.authenticate, flags: 0) == ignore)
        #expect(module(context, arcad, ["socket=\(place.socket)"]).run(.openSession, flags: 0) == success)
        #expect(arcad.kinds == ["kdfParameters", "loginUnlock", "openSession"])
        #expect(arcad.requests[1] == .loginUnlock(uid: 1000, key: try key("pw", cheapWire)))
    }

    /// A screen locker (not root) cannot read the file and does not try: it asks arcad.
    @Test func anUnprivilegedModuleAsksArcad() throws {
        let place = try Place()
        place.write(file(), to: place.file)
        let context = FakeContext()
        context.secrets[.authToken] = "pw"
        context.effectiveUID = 1000
        let arcad = FakeArcad()
        arcad.vault = (cheapWire, try key("pw", cheapWire))
        #expect(module(context, arcad, ["socket=\(place.socket)"]).run(.authenticate, flags: 0) == ignore)
        #expect(arcad.kinds == ["kdfParameters", "unlock"])
    }
}
