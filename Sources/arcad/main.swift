import ArcaDaemon

#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "--version" || arguments.first == "version" {
    print(ArcaDaemon.versionLine)
    exit(0)
}
FileHandleStderr.write("arcad: the daemon is not implemented yet in this release\n")
exit(1)

enum FileHandleStderr {
    static func write(_ s: String) { fputs(s, stderr) }
}
