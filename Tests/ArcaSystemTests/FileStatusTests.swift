import ArcaSystem
import Glibc
import Testing

/// `FileDescriptor.status(path:)` (lstat) and `status()` (fstat): one description of a file
/// for every check in the tree.
@Suite("FileDescriptor.Status: lstat of a path, fstat of an open file")
struct FileStatusTests {
    /// A fresh directory under /tmp, removed by the test.
    static func directory() throws -> String {
        var template = Array("/tmp/arca-status.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno.current }
        return String(cString: made)
    }

    @Test("a regular file, a directory, a symlink (not followed), nothing")
    func pathStatus() throws {
        let dir = try Self.directory()
        defer {
            unlink(dir + "/link")
            unlink(dir + "/file")
            rmdir(dir)
        }
        let fd = try FileDescriptor.open(dir + "/file", O_WRONLY | O_CREAT | O_EXCL, permissions: 0o600)
        try Array("12345".utf8).withUnsafeBytes { try fd.writeAll($0) }
        #expect(fchmod(fd.rawValue, 0o640) == 0)
        let file = try #require(try FileDescriptor.status(path: dir + "/file"))
        #expect(file.owner == geteuid() && file.permissions == 0o640 && file.size == 5 && file.linkCount == 1)
        #expect(file.isRegularFile && !file.isDirectory && !file.isSymbolicLink)
        #expect(try fd.status() == file, "fstat of the open file says the same")
        fd.close()

        let directory = try #require(try FileDescriptor.status(path: dir))
        #expect(directory.isDirectory && !directory.isRegularFile && !directory.isSymbolicLink)
        #expect(directory.permissions == 0o700 && directory.owner == geteuid())

        #expect(symlink(dir, dir + "/link") == 0)
        let link = try #require(try FileDescriptor.status(path: dir + "/link"))
        #expect(link.isSymbolicLink && !link.isDirectory && !link.isRegularFile, "the link itself, not its target")
        #expect(link.size == dir.utf8.count)

        #expect(try FileDescriptor.status(path: dir + "/missing") == nil)
        #expect(throws: Errno.notDirectory) { try FileDescriptor.status(path: dir + "/file/below") }
    }

    @Test("device and inode name the file; followingLinks reports the link's target")
    func identityAndFollowing() throws {
        let dir = try Self.directory()
        defer {
            unlink(dir + "/dangling")
            unlink(dir + "/link")
            unlink(dir + "/file")
            rmdir(dir)
        }
        let fd = try FileDescriptor.open(dir + "/file", O_WRONLY | O_CREAT | O_EXCL, permissions: 0o600)
        defer { fd.close() }
        var st = stat()
        #expect(stat(dir + "/file", &st) == 0)
        let file = try #require(try FileDescriptor.status(path: dir + "/file"))
        #expect(file.device == UInt64(st.st_dev) && file.inode == UInt64(st.st_ino))
        #expect(try fd.status().inode == UInt64(st.st_ino))

        #expect(symlink(dir + "/file", dir + "/link") == 0)
        let link = try #require(try FileDescriptor.status(path: dir + "/link"))
        #expect(link.isSymbolicLink && link.inode != file.inode)
        #expect(try FileDescriptor.status(path: dir + "/link", followingLinks: true) == file, "the file itself")

        #expect(symlink(dir + "/missing", dir + "/dangling") == 0)
        #expect(try FileDescriptor.status(path: dir + "/dangling")?.isSymbolicLink == true)
        #expect(try FileDescriptor.status(path: dir + "/dangling", followingLinks: true) == nil)
    }
}
