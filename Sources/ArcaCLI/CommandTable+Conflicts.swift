/// `arca find --conflicts` and `arca resolve`: the conflict siblings sync keeps when two
/// machines changed an item concurrently (issue 17). See Context+Conflicts.swift.
extension CommandTable {
    /// `--conflicts` of `find`.
    static let conflicts = OptionSpec(
        .conflicts, "list the items sync left with conflict siblings, each version by hash (see resolve)")

    /// The resolve verb.
    static let conflictVerbs: [VerbSpec] = [
        VerbSpec(
            "resolve",
            "keep one version of a conflicted item on every machine: ITEM and VERSION as find --conflicts shows",
            positionals: "ITEM VERSION", maximumPositionals: 2
        ) { parsed throws(UsageError) in try Validation.resolve(parsed) }
    ]
}

extension Validation {
    /// `find --conflicts`: no item options (every conflict is listed).
    static func findConflicts(_ parsed: ParsedCommand) throws(UsageError) -> Command {
        let json = parsed.wantsJSON
        return .action(
            VerbAction(verb: parsed.verb, arguments: ["--conflicts"] + (json ? ["--json"] : [])) {
                context, output throws(CLIError) in try context.findConflicts(json: json, output: &output)
            })
    }

    /// `resolve ITEM VERSION`: ITEM is 32 hex digits, VERSION at least 8 hex digits of a version's hash.
    static func resolve(_ parsed: ParsedCommand) throws(UsageError) -> Command {
        guard parsed.positionals.count == 2 else {
            throw UsageError("'resolve' needs ITEM and VERSION (from 'arca find --conflicts')", verb: parsed.verb)
        }
        let item = parsed.positionals[0].lowercased()
        let version = parsed.positionals[1].lowercased()
        let hex = Set("0123456789abcdef")
        guard item.count == 32, item.allSatisfy(hex.contains) else {
            throw UsageError("ITEM is the 32 hex digits 'find --conflicts' prints", verb: parsed.verb)
        }
        guard (8...64).contains(version.count), version.allSatisfy(hex.contains) else {
            throw UsageError("VERSION is at least 8 hex digits of a version's hash", verb: parsed.verb)
        }
        return .action(
            VerbAction(verb: parsed.verb, arguments: [item, version]) { context, output throws(CLIError) in
                try context.resolve(item: item, version: version, output: &output)
            })
    }
}
