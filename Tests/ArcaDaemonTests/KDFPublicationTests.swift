import ArcaCrypto
import ArcaProtocol
import ArcaSystem
import Foundation
import Testing

@testable import ArcaDaemon

/// arcad publishes each open vault's KDF parameters next to its socket for pam_arca
/// (PublishedKDFParameters), and rewrites them at every change, so that a login never
/// derives with parameters the vault no longer has (its key would count as a wrong guess).
@Suite struct KDFPublicationTests {
    let uid: UInt32 = 4242

    final class Place {
        let root = NSTemporaryDirectory() + "login16f-kdfpub-" + UUID().uuidString
        let daemon: Daemon
        var config = DaemonConfig()
        init() throws {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
            config.stateDirectory = root + "/state"
            config.socketPath = root + "/sock"
            daemon = try Daemon(config: config, kernel: RecordingKernel(), publishesParameters: true)
        }
        deinit {
            var request = Request.lockAll
            _ = daemon.handle(&request, from: PeerCredentials(pid: 1, uid: 0, gid: 0))
            try? FileManager.default.removeItem(atPath: root)
        }
        func send(_ request: Request, to daemon: Daemon? = nil) -> Reply {
            var request = request
            return (daemon ?? self.daemon).handle(&request, from: PeerCredentials(pid: 1, uid: 0, gid: 0))
        }
        func published(_ uid: UInt32) throws -> PublishedKDFParameters? {
            let path = PublishedKDFParameters.path(socketPath: config.socketPath, uid: uid)
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            var st = stat()
            #expect(stat(path, &st) == 0 && st.st_uid == geteuid() && st.st_mode & 0o7777 == 0o600)
            #expect(stat(PublishedKDFParameters.directory(socketPath: config.socketPath), &st) == 0)
            #expect(st.st_mode & 0o7777 == 0o700)
            return try PublishedKDFParameters(decoding: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        }
    }

    func parameters(salt byte: UInt8) -> KeyDerivationParameters {
        KeyDerivationParameters(opsLimit: 1, memoryLimit: 64 << 20, salt: [UInt8](repeating: byte, count: 16))
    }

    @Test func eachChangeOfTheVaultsParametersIsPublished() throws {
        let place = try Place()
        #expect(try place.published(uid) == nil)
        let first = try derivedKey("pw")
        #expect(place.send(.enroll(uid: uid, key: first, parameters: testParameters)) == .ok)
        let enrolled = try #require(try place.published(uid))
        #expect(
            enrolled
                == PublishedKDFParameters(
                    publisherPID: UInt32(bitPattern: getpid()),
                    publisherStartTime: try #require(ProcessStartTime.current),
                    uid: uid, parameters: testParameters))

        // A password change: the new salt at once.
        let changed = parameters(salt: 0x51)
        let second = try derivedKey("pw2", salt: changed.salt)
        #expect(place.send(.changePassword(uid: uid, oldKey: first, newKey: second, parameters: changed)) == .ok)
        #expect(try place.published(uid)?.parameters == changed)

        // An administrator's reset waits (the vault still opens with pw2) ...
        let reset = parameters(salt: 0x52)
        let third = try derivedKey("pw3", salt: reset.salt)
        #expect(place.send(.passwordReset(uid: uid, newKey: third, parameters: reset)) == .ok)
        #expect(try place.published(uid)?.parameters == changed)
        // ... until the next unlock with the old password re-wraps the vault: published then.
        #expect(place.send(.loginUnlock(uid: uid, key: second)) == .ok)
        #expect(try place.published(uid)?.parameters == reset)

        // A restarted arcad publishes when it opens the vault (its first request for the user), asked
        // by the user: root's asking would republish anyway (rootAskingRewritesACopyItCouldNotBelieve).
        try FileManager.default.removeItem(
            atPath: PublishedKDFParameters.path(socketPath: place.config.socketPath, uid: uid))
        let restarted = try Daemon(config: place.config, kernel: RecordingKernel(), publishesParameters: true)
        var ask = Request.kdfParameters(uid: uid)
        #expect(restarted.handle(&ask, from: PeerCredentials(pid: 1, uid: uid, gid: uid)) == .kdfParameters(reset))
        #expect(try place.published(uid)?.parameters == reset)
    }

    /// pam_arca asks arcad only when it found no copy it could believe: a request from root
    /// rewrites the copy of a vault already open; a user's request (a screen locker) does not.
    @Test func rootAskingRewritesACopyItCouldNotBelieve() throws {
        let place = try Place()
        #expect(place.send(.enroll(uid: uid, key: try derivedKey("pw"), parameters: testParameters)) == .ok)
        let path = PublishedKDFParameters.path(socketPath: place.config.socketPath, uid: uid)
        let good = try Data(contentsOf: URL(fileURLWithPath: path))
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
        var request = Request.kdfParameters(uid: uid)
        #expect(
            place.daemon.handle(&request, from: PeerCredentials(pid: 1, uid: uid, gid: uid))
                == .kdfParameters(testParameters))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data([1, 2, 3]), "a user's request writes nothing")
        #expect(place.send(.kdfParameters(uid: uid)) == .kdfParameters(testParameters))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == good)
    }

    /// A publish that fails (here `<uid>.tmp` is a directory) removes the old copy: pam_arca
    /// asks arcad rather than derive with parameters the vault no longer has.
    @Test func aFailedPublishRemovesTheOldCopy() throws {
        let place = try Place()
        let first = try derivedKey("pw")
        #expect(place.send(.enroll(uid: uid, key: first, parameters: testParameters)) == .ok)
        #expect(try place.published(uid)?.parameters == testParameters)
        let path = PublishedKDFParameters.path(socketPath: place.config.socketPath, uid: uid)
        #expect(mkdir(path + ".tmp", 0o700) == 0)
        let changed = parameters(salt: 0x61)
        let second = try derivedKey("pw2", salt: changed.salt)
        #expect(place.send(.changePassword(uid: uid, oldKey: first, newKey: second, parameters: changed)) == .ok)
        #expect(!FileManager.default.fileExists(atPath: path), "the old copy is gone")
        #expect(rmdir(path + ".tmp") == 0)
        #expect(place.send(.kdfParameters(uid: uid)) == .kdfParameters(changed))
        #expect(try place.published(uid)?.parameters == changed, "the next root ask publishes again")
    }

    /// A directory already there: arcad's own at 0755 (others could not write it) is made 0700
    /// and used; another owner's, or one others may write, is refused: nothing is published.
    @Test func aDirectoryAlreadyThereIsTightenedOrRefused() throws {
        do {
            let place = try Place()
            let directory = PublishedKDFParameters.directory(socketPath: place.config.socketPath)
            #expect(mkdir(directory, 0o755) == 0 && chmod(directory, 0o755) == 0)
            #expect(place.send(.enroll(uid: uid, key: try derivedKey("pw"), parameters: testParameters)) == .ok)
            #expect(try place.published(uid)?.parameters == testParameters, "published; the directory made 0700")
        }
        for (owner, mode) in [(UInt32(65534), mode_t(0o700)), (UInt32(0), mode_t(0o777)), (UInt32(0), mode_t(0o730))] {
            let place = try Place()
            let directory = PublishedKDFParameters.directory(socketPath: place.config.socketPath)
            #expect(mkdir(directory, 0o700) == 0 && chmod(directory, mode) == 0 && chown(directory, owner, owner) == 0)
            #expect(place.send(.enroll(uid: uid, key: try derivedKey("pw"), parameters: testParameters)) == .ok)
            let path = PublishedKDFParameters.path(socketPath: place.config.socketPath, uid: uid)
            #expect(!FileManager.default.fileExists(atPath: path), "owner \(owner) mode \(String(mode, radix: 8))")
            var st = stat()
            #expect(stat(directory, &st) == 0 && st.st_mode & 0o7777 == mode && st.st_uid == owner, "left as it was")
        }
    }

    /// A refused directory is the publication's own failure (no request is involved, so no
    /// HandlerError), named with the directory; a failed call is a SystemError naming it.
    @Test func eachFailureOfAPublicationSaysWhichItIs() throws {
        let place = try Place()
        let publication = try #require(place.daemon.publication)
        let directory = PublishedKDFParameters.directory(socketPath: place.config.socketPath)
        let kdf = KDFParameters(opsLimit: 1, memoryLimit: 64 << 20, salt: [UInt8](repeating: 1, count: 16))
        #expect(mkdir(directory, 0o700) == 0 && chmod(directory, 0o777) == 0)
        #expect(publication.publish(uid: uid, kdf) == .refusedDirectory(directory))
        #expect(
            KDFPublication.Failure.refusedDirectory(directory).description
                == "\(directory) is not a 0700 directory of arcad's own")
        #expect(rmdir(directory) == 0 && symlink(place.root, directory) == 0)
        #expect(publication.publish(uid: uid, kdf) == .refusedDirectory(directory), "a symlink")
        #expect(unlink(directory) == 0 && mkdir(directory, 0o700) == 0)
        let path = directory + "/" + PublishedKDFParameters.fileName(uid: uid)
        #expect(mkdir(path + ".tmp", 0o700) == 0)
        #expect(
            publication.publish(uid: uid, kdf)
                == .system(SystemError(call: "unlink \(path).tmp", errno: Errno(rawValue: EISDIR))))
        #expect(rmdir(path + ".tmp") == 0)
        #expect(publication.publish(uid: uid, kdf) == nil)
        #expect(try place.published(uid)?.parameters.salt == kdf.salt)
    }

    @Test func aDaemonAskedNotToPublishWritesNothing() throws {
        let root = NSTemporaryDirectory() + "login16f-kdfpub-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: root) }
        var config = DaemonConfig()
        config.stateDirectory = root + "/state"
        config.socketPath = root + "/sock"
        let daemon = try Daemon(config: config, kernel: RecordingKernel())
        var request = Request.enroll(uid: uid, key: try derivedKey("pw"), parameters: testParameters)
        #expect(daemon.handle(&request, from: PeerCredentials(pid: 1, uid: 0, gid: 0)) == .ok)
        #expect(
            !FileManager.default.fileExists(atPath: PublishedKDFParameters.directory(socketPath: config.socketPath)))
    }
}
