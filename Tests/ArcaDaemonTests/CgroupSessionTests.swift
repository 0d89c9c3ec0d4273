import ArcaSystem
import CSystemd
import Foundation
import Testing

@testable import ArcaDaemon

/// The logind session read from `/proc/PID/cgroup` by hand, as `sd_pid_get_session`
/// reads it (systemd's cg_pid_get_path, cg_shift_path, cg_path_get_session).
@Suite struct CgroupSessionTests {
    func path(_ text: String, unified: Bool) -> String? {
        CgroupSession.systemdPath(in: Array(text.utf8), unified: unified)
    }

    @Test("the hierarchy systemd tracks units in: unified 0:: when /sys/fs/cgroup is cgroup2 or has one below")
    func layout() {
        let (v2, tmp, v1) = (FileSystemType.cgroup2, FileSystemType.tmpfs, FileSystemType.cgroup1)
        #expect(CgroupSession.unifiedLayout(top: v2, unified: nil, systemd: nil) == true)
        #expect(CgroupSession.unifiedLayout(top: tmp, unified: v2, systemd: v1) == true)  // hybrid (this machine)
        #expect(CgroupSession.unifiedLayout(top: tmp, unified: nil, systemd: v2) == true)  // systemd 232's hybrid
        #expect(CgroupSession.unifiedLayout(top: tmp, unified: nil, systemd: v1) == false)  // legacy
        #expect(CgroupSession.unifiedLayout(top: tmp, unified: nil, systemd: nil) == nil)
        #expect(CgroupSession.unifiedLayout(top: nil, unified: nil, systemd: nil) == nil)
    }

    @Test("the path: the 0:: line in the unified layout, the name=systemd line in the legacy one")
    func hierarchy() {
        #expect(
            path("0::/user.slice/user-1000.slice/session-3.scope\n", unified: true)
                == "/user.slice/user-1000.slice/session-3.scope")
        let hybrid = "12:cpu,cpuacct:/user.slice\n1:name=systemd:/user.slice/user-0.slice/session-c7.scope\n0::/x\n"
        #expect(path(hybrid, unified: false) == "/user.slice/user-0.slice/session-c7.scope")
        #expect(path(hybrid, unified: true) == "/x")
        #expect(path("9:name=systemd:/a:b\n0::/\n", unified: false) == "/a:b")  // a path may hold ':'
        #expect(path("4:memory:/process_api/e65\n0::/\n", unified: true) == "/")
        #expect(path("4:memory:/x\n", unified: true) == nil)
        #expect(path("4:memory:/x\n", unified: false) == nil)
        #expect(path("", unified: true) == nil)
        // A zombie's path: systemd strips the suffix, in either layout.
        #expect(path("0::/user.slice/session-3.scope (deleted)\n", unified: true) == "/user.slice/session-3.scope")
        #expect(path("1:name=systemd:/session-c2.scope (deleted)\n", unified: false) == "/session-c2.scope")
        #expect(path("0::/a (deleted) b\n", unified: true) == "/a (deleted) b")
    }

    @Test("the first unit past the leading slices must be session-ID.scope, ID letters and digits")
    func session() {
        #expect(CgroupSession.session(inPath: "/user.slice/user-1000.slice/session-3.scope") == "3")
        #expect(CgroupSession.session(inPath: "/user.slice/user-0.slice/session-c12.scope/sub") == "c12")
        #expect(CgroupSession.session(inPath: "/session-7.scope") == "7")
        #expect(CgroupSession.session(inPath: "/user.slice/user-1000.slice/_session-4.scope") == "4")
        #expect(CgroupSession.session(inPath: "/user.slice/user-1000.slice/user@1000.service/app.slice") == nil)
        #expect(CgroupSession.session(inPath: "/system.slice/sshd.service") == nil)
        #expect(CgroupSession.session(inPath: "/user.slice/session-.scope") == nil)
        #expect(CgroupSession.session(inPath: "/user.slice/session-a_b.scope") == nil)
        #expect(CgroupSession.session(inPath: "/user.slice/user-1000.slice") == nil)
        #expect(CgroupSession.session(inPath: "/") == nil)
        #expect(CgroupSession.session(inPath: "") == nil)
        // A slice-like component that is no valid unit name stops the skipping.
        #expect(CgroupSession.session(inPath: "/bad name.slice/session-3.scope") == nil)
        // A unit name is at most 255 bytes: "session-" + ID + ".scope".
        let longest = String(repeating: "7", count: 255 - "session-.scope".count)
        #expect(CgroupSession.session(inPath: "/user.slice/session-\(longest).scope") == longest)
        #expect(CgroupSession.session(inPath: "/user.slice/_session-\(longest).scope") == longest)
        #expect(CgroupSession.session(inPath: "/user.slice/session-\(longest)7.scope") == nil)
    }

    @Test("paths are taken relative to the root PID 1 lies in (a container without a cgroup namespace)")
    func shift() {
        #expect(CgroupSession.root(ofPID1Path: "/init.scope") == "")
        #expect(CgroupSession.root(ofPID1Path: "/") == "/")
        #expect(CgroupSession.root(ofPID1Path: "/docker/abc/init.scope") == "/docker/abc")
        #expect(CgroupSession.root(ofPID1Path: "/lxc/c1/system.slice") == "/lxc/c1")
        let inside = "/docker/abc/user.slice/user-0.slice/session-c1.scope"
        #expect(CgroupSession.shifted(inside, below: "/docker/abc") == "/user.slice/user-0.slice/session-c1.scope")
        #expect(
            CgroupSession.shifted("/docker/abcd/session-1.scope", below: "/docker/abc")
                == "/docker/abcd/session-1.scope")
        #expect(CgroupSession.shifted("/docker/abc", below: "/docker/abc") == "/")
        #expect(CgroupSession.shifted(inside, below: "") == inside)
        #expect(CgroupSession.shifted(inside, below: "/") == inside)
        #expect(CgroupSession.session(inPath: CgroupSession.shifted(inside, below: "/docker/abc")) == "c1")
    }

    /// What libsystemd says (the call arcad made before).
    func libsystemd(_ pid: Int32) -> String? {
        var session: UnsafeMutablePointer<CChar>?
        guard sd_pid_get_session(pid, &session) >= 0, let session else { return nil }
        defer { free(session) }
        return String(cString: session)
    }

    @Test("this process, pid 1, this process's parent and a missing pid read as libsystemd reads them")
    func live() {
        for pid in [getpid(), 1, getppid(), 4_000_000] {
            #expect(CgroupSession.session(of: pid) == libsystemd(pid), "pid \(pid)")
        }
    }
}
