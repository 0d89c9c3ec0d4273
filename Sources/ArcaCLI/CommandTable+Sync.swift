/// `arca sync`: synchronizable items across one person's machines (issue 17). arcad keeps the
/// device key and circle key; see Context+Sync.swift.
extension CommandTable {
    /// The sync verb, one row whose first word says what to do.
    static let syncVerbs: [VerbSpec] = [
        VerbSpec(
            "sync",
            "sync synchronizable items across your machines: 'init' creates your circle on this one; "
                + "join, approve, remove, status, run and recover are arca-sync(1)'s",
            positionals: "init|join|approve|remove|status|run|recover [ARGS...]", maximumPositionals: 64
        ) { parsed throws(UsageError) in
            // The arca binary execs arca-sync for the other verbs before parsing (CLI.main): only an
            // in-process run gets here with one, and it must never replace its caller.
            if let first = parsed.positionals.first, HandOver.syncVerbs.contains(first) {
                throw UsageError("'sync \(first)' runs arca-sync; see arca-sync(1)", verb: parsed.verb)
            }
            guard parsed.positionals == ["init"] else {
                throw UsageError("'sync' needs init, join, approve, remove, status, run or recover", verb: parsed.verb)
            }
            return .action(
                VerbAction(verb: parsed.verb, arguments: parsed.positionals) { context, output throws(CLIError) in
                    try context.syncInit(output: &output)
                })
        }
    ]
}
