// arca-sync: the per-user sync agent and the `arca sync` verbs join, approve, remove,
// status and run (arca-sync(1)). `arca sync VERB ...` execs this binary with the same
// arguments and stdin.
import ArcaSyncAgent

#if canImport(Glibc)
    import Glibc
#endif

exit(SyncCLI.main(Array(CommandLine.arguments.dropFirst())))
