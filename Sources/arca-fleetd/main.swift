// arca-fleetd: the fleet's admin verbs and the root host agent (arca-fleetd(8)).
// `arca fleet ...` execs this binary with the same arguments and stdin.
import ArcaFleet

#if canImport(Glibc)
    import Glibc
#endif

exit(FleetCLI.main(Array(CommandLine.arguments.dropFirst())))
