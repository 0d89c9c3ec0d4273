import Arca

#if canImport(Glibc)
import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "version", "--version":
    print("arca \(Arca.version)")
    exit(0)
case "help", "--help", "-h", nil:
    print("usage: arca version")
    exit(0)
default:
    fputs("arca: \(arguments[0]): unknown verb\nusage: arca version\n", stderr)
    exit(2)
}
