/// The process's command line read word by word from the C `argv`, for ``QuickGet``:
/// `CommandLine.arguments` builds an array of strings, whose first use in a fresh
/// process instantiates generic metadata from mangled names and faults in the pages
/// that hold it (about a tenth of `arca version`'s CPU time).
enum ProcessArguments {
    /// The number of words after the program name.
    static var count: Int { max(0, Int(CommandLine.argc) - 1) }

    /// Word `index` after the program name (`0..<count`); invalid UTF-8 is repaired,
    /// as in `CommandLine.arguments`.
    static func word(_ index: Int) -> String {
        guard index >= 0, index < count, let word = CommandLine.unsafeArgv[index + 1] else { return "" }
        return String(cString: word)
    }
}
