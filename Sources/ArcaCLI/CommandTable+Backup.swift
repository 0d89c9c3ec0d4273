/// `arca export` and `arca import`: encrypted backups in the sync record format
/// (arca-vault(5), BACKUP FILES). arcad seals and opens them; see Context+Backup.swift.
extension CommandTable {
    /// The backup verbs, each a row with its own handler.
    static let backupVerbs: [VerbSpec] = [
        VerbSpec(
            "export",
            "write an encrypted backup of every item except ThisDeviceOnly ones (up to 256 MiB per user)",
            options: [
                OptionSpec(
                    .to, .value("FILE"),
                    "the new backup file (never overwritten; mode 0600; appears only when complete)"),
                OptionSpec(.passphrase, "seal to a passphrase read from stdin instead of the recovery key"),
            ]
        ) { parsed throws(UsageError) in
            guard let path = parsed.value(.to), !path.isEmpty else {
                throw UsageError("'export' needs --to FILE", verb: parsed.verb)
            }
            let passphrase = parsed.has(.passphrase)
            return .action(
                VerbAction(verb: parsed.verb, arguments: [path] + (passphrase ? ["--passphrase"] : [])) {
                    context, output throws(CLIError) in
                    try context.exportBackup(to: path, passphrase: passphrase, output: &output)
                })
        },
        VerbSpec(
            "import",
            "merge an encrypted backup into your vault (importing it again changes nothing), or copy in the items of "
                + "the running Secret Service provider (--from secret-service)",
            options: [
                OptionSpec(.from, .value("FILE"), "the backup file, or secret-service (runs arca-secretd(1) --import)"),
                OptionSpec(
                    .busName, .value("NAME"), "secret-service: the provider's bus name (org.freedesktop.secrets)"),
                OptionSpec(
                    .collection, .value("C"), "secret-service: alias, name or path (default: the default alias)"),
                OptionSpec(.dryRun, "secret-service: read and count, write nothing"),
            ], json: true
        ) { parsed throws(UsageError) in
            guard let path = parsed.value(.from), !path.isEmpty else {
                throw UsageError("'import' needs --from FILE", verb: parsed.verb)
            }
            // `arca import --from secret-service` execs arca-secretd before parsing (CLI.main, HandOver).
            guard path != HandOver.secretServiceSource else {
                throw UsageError(
                    "'import --from secret-service' runs arca-secretd --import; see arca-secretd(1)", verb: parsed.verb)
            }
            for key in [OptionKey.busName, .collection, .dryRun, .json] where parsed.has(key) {
                throw UsageError("--\(key) is for 'import --from secret-service', not a backup file", verb: parsed.verb)
            }
            return .action(
                VerbAction(verb: parsed.verb, arguments: [path]) { context, output throws(CLIError) in
                    try context.importBackup(from: path, output: &output)
                })
        },
    ]
}
