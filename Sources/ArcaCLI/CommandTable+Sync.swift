/// `arca sync`: synchronizable items across one person's machines (issue 17). arcad keeps the
/// device key and circle key; see Context+Sync.swift.
extension CommandTable {
    /// The sync verb, one row whose first word says what to do.
    static let syncVerbs: [VerbSpec] = [
        VerbSpec(
            "sync", "sync synchronizable items across your machines: 'init' creates your circle on this one",
            positionals: "init", maximumPositionals: 1
        ) { parsed throws(UsageError) in
            guard parsed.positionals == ["init"] else {
                throw UsageError("'sync' needs 'init' (join, approve and run come later)", verb: parsed.verb)
            }
            return .action(
                VerbAction(verb: parsed.verb, arguments: parsed.positionals) { context, output throws(CLIError) in
                    try context.syncInit(output: &output)
                })
        }
    ]
}
