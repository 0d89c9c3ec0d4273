// A child process for ArcaVaultTests' crash and concurrency tests. It uses only
// the public API (it is also built in release) and plain Glibc.
//
//   arca-vault-crashtest add <vault> <password> <first-id> [count [checkpoint-pages]]
//       adds items "item-<id>" from <first-id> on, printing each id on its own
//       line after add returned success; runs until killed unless count is given
//       (0: until killed). With checkpoint-pages, the vault's background checkpointer
//       starts past that many WAL frames (a few: nearly always mid-checkpoint).
//   arca-vault-crashtest passwd <vault> <password-a> <password-b>
//       changes the password back and forth, printing the current one after each change.
import ArcaCrypto
import ArcaSystem
import ArcaVault

#if canImport(Glibc)
    import Glibc
#endif

func fail(_ message: String) -> Never {
    try? FileDescriptor.standardError.writeAll("arca-vault-crashtest: \(message)\n")
    exit(1)
}

func secret(_ s: String) -> SecretBytes {
    var bytes = Array(s.utf8)
    guard let value = try? SecretBytes(consuming: &bytes) else { fail("cannot allocate secure memory") }
    return value
}

func emit(_ line: String) {
    print(line)
    fflush(nil)
}

let args = CommandLine.arguments
guard args.count >= 5 else { fail("usage: add <vault> <password> <first-id> [count] | passwd <vault> <a> <b>") }
do {
    let pages = args.count > 6 ? Int(args[6]) ?? Vault.defaultCheckpointPages : Vault.defaultCheckpointPages
    let vault = try Vault.open(at: args[2], checkpointPages: pages)
    switch args[1] {
    case "add":
        try vault.unlock(password: secret(args[3]))
        guard let first = Int(args[4]) else { fail("bad first id") }
        let given = args.count > 5 ? Int(args[5]) ?? 0 : 0
        let count = given > 0 ? given : Int.max
        var id = first
        while id - first < count {
            var attributes = ItemAttributes()
            attributes.service = "crash"
            attributes.account = "item-\(id)"
            try vault.add(.genericPassword, attributes: attributes, secret: secret("secret-\(id)"))
            emit(String(id))
            id += 1
        }
    case "passwd":
        var current = args[3]
        var next = args[4]
        if (try? vault.unlock(password: secret(current))) == nil { swap(&current, &next) }
        while true {
            try vault.changePassword(old: secret(current), new: secret(next))
            swap(&current, &next)
            emit(current)
        }
    default:
        fail("unknown mode \(args[1])")
    }
} catch {
    fail("\(error)")
}
