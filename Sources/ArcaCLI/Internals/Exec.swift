#if canImport(Glibc)
    import Glibc
#endif

/// The calls a hand-over makes (``HandOver``: `arca fleet`, `arca import --from secret-service`).
enum Exec {
    /// This process's executable, or "" if unknown. The corresponding C function is
    /// `readlink("/proc/self/exe")`.
    static func currentExecutablePath() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        return length > 0 ? String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    }

    /// Whether `path` is executable by this process. The corresponding C function is `access(X_OK)`.
    static func isExecutable(_ path: String) -> Bool { access(path, X_OK) == 0 }

    /// Replaces this process with `path`, argv `arguments`; returns only on failure,
    /// with the reason. The corresponding C function is `execv`.
    static func replaceProcess(path: String, arguments: [String]) -> String {
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { word in strdup(word) }
        argv.append(nil)
        execv(path, argv)
        let reason = String(cString: strerror(errno))
        for pointer in argv { free(pointer) }
        return reason
    }
}
