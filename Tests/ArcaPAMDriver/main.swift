// arca-test-pam-driver: runs PAM steps in one process, with forks and fresh
// handles between them, to test what pamtester cannot: sshd-style (parent
// opens, a forked child closes) and xrdp-style (auth in one handle, session in
// another) flows. Passwords come from the stack (pam_set_items.so reads
// PAM_AUTHTOK from the environment), so the conversation answers nothing.
//
//   arca-test-pam-driver SERVICE USER STEP...
//   STEP: auth | open | close | chauthtok | fork (the rest runs in a child;
//         the parent waits) | newhandle (pam_end, then pam_start again) | loop:N
//         (repeat the steps after it N times, printing only the elapsed time)
//         | ruid:UID (real uid UID, effective uid still root: a setuid `su` run
//         by that user) | pause:FILE (wait until FILE exists, so a test can look around
//         while a session is open) | peak (prints "peak <MiB>", the process's
//         peak resident memory so far: Argon2id's memory shows there, so a test
//         can tell whether the steps before derived a key) | user:NAME (PAM_USER set
//         to NAME, pam_set_item, as an application may between steps)
//
// Prints "<step> <pam code>" per step. Test use only.
//
// Also a minimal arcad client for 35-pam-arcad.sh, which runs before the CLI
// exists: `arca-test-pam-driver --arcad SOCKET add UID SERVICE ACCOUNT CLASS`
// (secret from stdin; CLASS whenUnlocked or afterFirstUnlock) and
// `--arcad SOCKET lock UID` (lock whenUnlocked, as a screen lock does).
import ArcaClient
import ArcaProtocol
import ArcaSystem
import CPAM

#if canImport(Glibc)
    import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--arcad" { clientMain(Array(arguments.dropFirst())) }

func clientMain(_ arguments: [String]) -> Never {
    guard arguments.count >= 3, let uid = UInt32(arguments[2]) else {
        try? FileDescriptor.standardError.writeAll("usage: arca-test-pam-driver --arcad SOCKET add|lock UID ...\n")
        exit(2)
    }
    let request: Request
    switch arguments[1] {
    case "add" where arguments.count == 6:
        var secret: [UInt8] = []
        while case let c = getchar(), c != EOF { secret.append(UInt8(truncatingIfNeeded: c)) }
        let accessibility: Accessibility = arguments[5] == "afterFirstUnlock" ? .afterFirstUnlock : .whenUnlocked
        request = .add(
            AddRequest(
                vault: .user(uid: uid), itemClass: .genericPassword,
                attributes: [
                    .service: .string(arguments[3]), .account: .string(arguments[4]),
                    .accessible: .accessibility(accessibility),
                ], secret: secret))
    case "lock":
        request = .lock(uid: uid, classes: .whenUnlocked)
    default:
        try? FileDescriptor.standardError.writeAll("unknown client command\n")
        exit(2)
    }
    do {
        let reply = try ArcadClient(path: arguments[0], timeoutMilliseconds: 5_000).send(request)
        switch reply {
        case .ok, .items:
            print("ok")
            exit(0)
        case .error(let status, let message):
            print("error \(status.rawValue) \(message)")
            exit(1)
        default:
            print("reply \(reply.kind)")
            exit(1)
        }
    } catch {
        print("client error \(error)")
        exit(1)
    }
}
guard arguments.count >= 3 else {
    try? FileDescriptor.standardError.writeAll("usage: arca-test-pam-driver SERVICE USER STEP...\n")
    exit(2)
}
let service = arguments[0]
let user = arguments[1]
var steps = Array(arguments[2...])

var conversation = pam_conv(
    conv: { count, _, responses, _ in
        // No prompts are expected: answer each with an empty response array.
        let array = calloc(Int(count), MemoryLayout<pam_response>.size)
        responses?.pointee = array?.assumingMemoryBound(to: pam_response.self)
        return PAM_SUCCESS
    }, appdata_ptr: nil)

@MainActor func start() -> OpaquePointer {
    var handle: OpaquePointer?
    let rc = pam_start(service, user, &conversation, &handle)
    guard rc == PAM_SUCCESS, let handle else {
        print("pam_start \(rc)")
        exit(1)
    }
    return handle
}

@MainActor func run(_ step: String, _ handle: inout OpaquePointer, quiet: Bool = false) {
    var rc: Int32 = 0
    switch step {
    case "auth": rc = pam_authenticate(handle, 0)
    case "open": rc = pam_open_session(handle, 0)
    case "close": rc = pam_close_session(handle, 0)
    case "chauthtok": rc = pam_chauthtok(handle, 0)
    case let pause where pause.hasPrefix("pause:"):
        let file = String(pause.dropFirst(6))
        print("paused")
        fflush(nil)
        while access(file, F_OK) != 0 { usleep(20_000) }
    case let ruid where ruid.hasPrefix("ruid:"):
        // Real uid UID, effective and saved uid kept (root): a setuid PAM
        // application such as `su` run by that user, who may signal it.
        rc = setreuid(UInt32(ruid.dropFirst(5)) ?? 0, UInt32.max)
    case let name where name.hasPrefix("user:"):
        // PAM_USER set anew between steps, as an application may (pam_set_item).
        rc = pam_set_item(handle, PAM_USER, String(name.dropFirst(5)))
    case "newhandle":
        _ = pam_end(handle, PAM_SUCCESS)
        handle = start()
    case "peak":
        print("peak \(peakResidentKiB() / 1024)")
        fflush(nil)
        return
    default:
        try? FileDescriptor.standardError.writeAll("unknown step \(step)\n")
        exit(2)
    }
    if !quiet { print("\(step) \(rc)") }
    fflush(nil)
}

/// VmHWM of /proc/self/status, in KiB (0 if unreadable).
func peakResidentKiB() -> Int {
    guard let file = fopen("/proc/self/status", "r") else { return 0 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(cString: line)
        guard text.hasPrefix("VmHWM:") else { continue }
        return Int(text.dropFirst(6).filter(\.isNumber)) ?? 0
    }
    return 0
}

func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

var handle = start()
var index = 0
while index < steps.count {
    let step = steps[index]
    index += 1
    if step == "fork" {
        let pid = fork()
        if pid < 0 {
            print("fork failed")
            exit(1)
        }
        if pid > 0 {
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            // The child's exit code (or 128 + signal) is the driver's.
            let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            print("child exited \(code)")
            exit(code)
        }
        print("forked")
        continue
    }
    if step.hasPrefix("loop:"), let count = Int(step.dropFirst(5)) {
        // Whole transactions: pam_start, the remaining steps, pam_end.
        let body = Array(steps[index...])
        _ = pam_end(handle, PAM_SUCCESS)
        var times: [UInt64] = []
        for _ in 0..<count {
            let begin = monotonicNanoseconds()
            var h = start()
            for s in body { run(s, &h, quiet: true) }
            _ = pam_end(h, PAM_SUCCESS)
            times.append(monotonicNanoseconds() - begin)
        }
        times.sort()
        print("median_us \(times[times.count / 2] / 1000) p90_us \(times[times.count * 9 / 10] / 1000)")
        exit(0)
    }
    run(step, &handle)
}
_ = pam_end(handle, PAM_SUCCESS)
print("end")
