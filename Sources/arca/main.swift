// The `arca` executable: everything lives in the ArcaCLI library, so that tests
// can parse and run commands in-process.
import ArcaCLI

#if canImport(Glibc)
    import Glibc
#endif

exit(CLI.main())
