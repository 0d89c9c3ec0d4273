// swift-tools-version:6.0
// Arca — a Keychain for Linux. The layering below is the one of ARCHITECTURE §3:
// C only through the system-library targets, and `unsafeFlags` only on the
// executables and the PAM module, so that other packages can depend on the
// `Arca` and `ArcaSecurity` library products.
import PackageDescription

/// Executables link the Swift runtime statically: they must run with the
/// toolchain's directory hidden, and `arca get` must start in about 2 ms.
let staticExecutable: [LinkerSetting] = [.unsafeFlags(["-static-stdlib"])]

/// The same, for an executable that imports Foundation: with -static-stdlib SwiftPM links
/// FoundationEssentials' archive but not the two helper archives under it.
let staticFoundationExecutable: [LinkerSetting] =
    staticExecutable + [.linkedLibrary("_FoundationCollections"), .linkedLibrary("_FoundationCShims")]

/// The PAM module: static Swift runtime, only `pam_sm_*` exported, every symbol
/// resolved at link time, and never unloaded by `pam_end`.
/// lld, because gold leaves the Swift type descriptors that the version script
/// localizes in .dynsym (as LOCAL entries); lld drops them.
/// Login cost (bench/pam, a fresh process's dlopen): libstdc++ is linked from GCC's
/// archive (pam/link/libstdc++.so says how), so loading the module does not load
/// and relocate libstdc++.so.6; relative relocations are packed (DT_RELR, glibc 2.36);
/// the unwinder comes from GCC's archive too (-static-libgcc), so no libgcc_s.so.1 is
/// searched for, mapped and relocated either (a fresh dlopen: 82k instructions, 9 page faults
/// and 10 syscalls fewer).
let pamModuleLinkage: [LinkerSetting] = [
    .unsafeFlags([
        "-static-stdlib", "-use-ld=lld", "-L\(Context.packageDirectory)/pam/link", "-Xclang-linker", "-static-libgcc",
        "-Xlinker", "--version-script=\(Context.packageDirectory)/pam/pam_arca.map",
        "-Xlinker", "-z", "-Xlinker", "defs",
        "-Xlinker", "-z", "-Xlinker", "nodelete",
        "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
    ])
]

let package = Package(
    name: "Arca",
    products: [
        .library(name: "Arca", targets: ["Arca"]),
        .library(name: "ArcaSecurity", targets: ["ArcaSecurity"]),
        .library(name: "pam_arca", type: .dynamic, targets: ["PAMShim"]),
        .executable(name: "arcad", targets: ["arcad"]),
        .executable(name: "arca", targets: ["arca"]),
        .executable(name: "arca-secretd", targets: ["arca-secretd"]),
        .executable(name: "arca-fleetd", targets: ["arca-fleetd"]),
        .executable(name: "arca-sync", targets: ["arca-sync"]),
    ],
    targets: [
        // C libraries from Debian's -dev packages.
        .systemLibrary(
            name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(
            name: "CKeyutils", pkgConfig: "libkeyutils", providers: [.apt(["libkeyutils-dev"])]),
        .systemLibrary(name: "CPAM", pkgConfig: "pam", providers: [.apt(["libpam0g-dev"])]),
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // The Secret Service session algorithm (DH group 2, AES-128-CBC): libsodium has neither.
        .systemLibrary(
            name: "CGcrypt", pkgConfig: "libgcrypt", providers: [.apt(["libgcrypt20-dev"])]),
        // libgcrypt's variadic gcry_control, which Swift cannot call, compiled as C.
        .target(name: "CArcaGcrypt", dependencies: ["CGcrypt"]),

        // The system layer: the C Swift cannot express (built with _GNU_SOURCE, as
        // swift-crypto's shims are), and one Swift target over it with `Errno`, the one
        // EINTR retry, file descriptors, Unix sockets with peer credentials, zeroing.
        .target(name: "CArcaSystem", cSettings: [.define("_GNU_SOURCE")]),
        .target(name: "ArcaSystem", dependencies: ["CArcaSystem"]),
        // Detached threads for the daemons (arcad, arca-secretd); apart from ArcaSystem,
        // which the PAM module links and which must not bring pthread_create into it.
        .target(name: "ArcaThreads", dependencies: ["ArcaSystem", "CArcaSystem"]),
        // Linked only into `arca` and pam_arca.so: argv for the Swift runtime without the
        // runtime's start-up read of /proc/self/maps (arguments.c says why and how).
        .target(name: "CArcaStartup"),

        // Core modules.
        .target(name: "ArcaCrypto", dependencies: ["ArcaSystem", "CSodium"]),
        .target(name: "ArcaProtocol", dependencies: ["ArcaSystem"]),
        // The client side of arcad's socket (ArcadClient): the codec's frames over ArcaSystem's sockets.
        .target(name: "ArcaClient", dependencies: ["ArcaProtocol", "ArcaSystem"]),
        // Sync records, their signatures and the merge (ARCHITECTURE §12): pure logic, no I/O.
        .target(name: "ArcaSync", dependencies: ["ArcaCrypto"]),
        .target(
            name: "ArcaKeyring", dependencies: ["CKeyutils", "CArcaSystem", "ArcaSystem", "ArcaCrypto", "ArcaProtocol"]),
        .target(
            name: "ArcaVault", dependencies: ["ArcaSystem", "ArcaCrypto", "ArcaProtocol", "ArcaThreads", "CSQLite"]),
        .target(
            name: "ArcaDaemon",
            dependencies: [
                "ArcaSystem", "ArcaThreads", "ArcaCrypto", "ArcaProtocol", "ArcaKeyring", "ArcaVault", "ArcaSync",
                "CSystemd",
            ]),

        // Public library products: no unsafe flags anywhere below them.
        .target(name: "Arca", dependencies: ["ArcaClient", "ArcaProtocol", "ArcaKeyring", "ArcaCrypto"]),
        .target(name: "ArcaSecurity", dependencies: ["Arca", "ArcaProtocol"]),

        // Executables.
        .executableTarget(
            name: "arcad", dependencies: ["ArcaDaemon", "ArcaSystem"], linkerSettings: staticExecutable),
        // The CLI's logic is a library (no unsafe flags) so its tests parse in-process.
        .target(
            name: "ArcaCLI", dependencies: ["ArcaSystem", "ArcaClient", "ArcaProtocol", "ArcaKeyring", "ArcaCrypto"]),
        // Fully static: a dynamically linked Swift binary spends ~2 ms in the loader
        // (libstdc++ symbol lookups, page faults) before main; `arca get` must stay
        // close to `keyctl print` (bench/cli).
        .executableTarget(
            name: "arca", dependencies: ["ArcaCLI", "CArcaStartup"],
            linkerSettings: [.unsafeFlags(["-static-executable"])]),

        // The PAM module: a C shim exporting pam_sm_* over a small Swift core.
        // ArcaCrypto brings SecretBytes and Argon2id: no Foundation, no threads, so it
        // is safe inside a module that libpam loads into any process that may fork.
        // pam_syslog with a fixed format, compiled as C (Swift's variadic calls cost a fresh login).
        .target(name: "CArcaPAM", dependencies: ["CPAM"]),
        .target(
            name: "ArcaPAM",
            dependencies: ["CPAM", "CArcaPAM", "ArcaClient", "ArcaProtocol", "ArcaCrypto", "ArcaSystem"]),
        .target(name: "PAMShim", dependencies: ["ArcaPAM", "CPAM", "CArcaStartup"], linkerSettings: pamModuleLinkage),

        // A stand-in arcad that records what pam_arca.so sends (Tests/integration/3x-pam-*.sh, bench/pam).
        .executableTarget(
            name: "arca-test-arcad-recorder", dependencies: ["ArcaProtocol", "ArcaCrypto"],
            path: "Tests/ArcaPAMRecorder"),
        // Runs PAM steps with forks and fresh handles between them (sshd/xrdp shapes), and timed loops for bench/pam.
        .executableTarget(
            name: "arca-test-pam-driver", dependencies: ["CPAM", "ArcaClient", "ArcaProtocol"],
            path: "Tests/ArcaPAMDriver"),
        .testTarget(
            name: "ArcaPAMTests",
            dependencies: ["ArcaPAM", "ArcaClient", "ArcaCrypto", "ArcaProtocol", "ArcaSystem", "CPAM"]),

        // Benchmarks: `make bench` runs each bench/NAME in one go.
        .executableTarget(name: "bench-kdf", dependencies: ["ArcaCrypto", "CSodium"], path: "bench/kdf"),
        .executableTarget(
            name: "bench-arcad", dependencies: ["ArcaClient", "ArcaProtocol", "ArcaCrypto", "ArcaKeyring"],
            path: "bench/arcad",
            exclude: ["run.sh"]),
        .executableTarget(
            name: "bench-sync", dependencies: ["ArcaSync", "ArcaCrypto"], path: "bench/sync", exclude: ["run.sh"]),
        .executableTarget(
            name: "bench-sync-outbox", dependencies: ["ArcaClient", "ArcaProtocol", "ArcaCrypto"],
            path: "bench/sync-outbox"),
        .executableTarget(
            name: "bench-keyring", dependencies: ["ArcaKeyring", "ArcaCrypto", "CKeyutils"], path: "bench/keyring"),

        // Tests mirror Sources/.
        .testTarget(name: "ArcaVaultTests", dependencies: ["ArcaVault", "arca-vault-crashtest"]),
        .executableTarget(
            name: "arca-vault-crashtest", dependencies: ["ArcaVault"], path: "Tests/ArcaVaultCrashChild"),
        .executableTarget(
            name: "bench-vault", dependencies: ["ArcaVault"], path: "bench/vault", exclude: ["wal-frames.py"]),
        .testTarget(
            name: "ArcaCryptoTests", dependencies: ["ArcaCrypto"], resources: [.copy("Resources")]),
        .testTarget(name: "ArcaDaemonTests", dependencies: ["ArcaDaemon", "ArcaTestSupport"]),
        // arcad end to end: the real binary, real sockets, real kernel, throwaway users.
        // (arcad is not a dependency: its -static-stdlib would leak into the test bundle's
        // link; `swift build --build-tests` builds it anyway.)
        .target(name: "ArcaTestSupport", dependencies: ["ArcaClient", "ArcaProtocol"], path: "Tests/ArcaTestSupport"),
        .executableTarget(name: "arcad-probe", dependencies: ["ArcaClient", "ArcaProtocol"], path: "Tests/ArcadProbe"),
        .testTarget(
            name: "ArcadTests",
            dependencies: [
                "ArcaClient", "ArcaProtocol", "ArcaCrypto", "ArcaKeyring", "ArcaTestSupport", "arcad-probe",
                "arca-keyring-probe",
            ]),
        .testTarget(name: "ArcaProtocolTests", dependencies: ["ArcaProtocol"]),
        .testTarget(name: "ArcaSystemTests", dependencies: ["ArcaSystem"]),
        // The library products: unit tests, and live tests against a real arcad.
        .target(
            name: "ArcaLibTestSupport",
            dependencies: ["Arca", "ArcaCrypto", "ArcaKeyring", "ArcaProtocol", "ArcaTestSupport"],
            path: "Tests/ArcaLibTestSupport"),
        .testTarget(
            name: "ArcaTests",
            dependencies: ["Arca", "ArcaClient", "ArcaProtocol", "ArcaKeyring", "ArcaLibTestSupport", "arca-lib-probe"]),
        .executableTarget(
            name: "arca-lib-probe", dependencies: ["Arca", "ArcaClient", "ArcaProtocol"], path: "Tests/ArcaLibProbe"),
        .testTarget(
            name: "ArcaSecurityTests",
            dependencies: ["ArcaSecurity", "ArcaProtocol", "ArcaLibTestSupport", "ArcaExamples"]),
        .target(name: "ArcaExamples", dependencies: ["ArcaSecurity"], path: "Examples"),
        .executableTarget(
            name: "bench-api",
            dependencies: ["Arca", "ArcaClient", "ArcaProtocol", "ArcaKeyring", "ArcaCrypto", "CKeyutils"],
            path: "bench/api", exclude: ["run.sh"]),
        // The keyring tests run the probe as throwaway users (setpriv) to read as them.
        .executableTarget(
            name: "arca-keyring-probe", dependencies: ["ArcaKeyring", "ArcaCrypto"], path: "Tests/ArcaKeyringProbe"),
        .testTarget(
            name: "ArcaKeyringTests",
            dependencies: ["ArcaKeyring", "ArcaCrypto", "ArcaProtocol", "ArcaTestSupport", "arca-keyring-probe"]),
        .testTarget(name: "ArcaSyncTests", dependencies: ["ArcaSync", "ArcaCrypto"]),
        .testTarget(
            name: "ArcaCLITests",
            dependencies: ["ArcaCLI", "ArcaClient", "ArcaProtocol", "ArcaCrypto", "ArcaTestSupport"]),

        // The freedesktop Secret Service provider (arca-secretd).
        .target(
            name: "ArcaSecretService",
            dependencies: [
                "ArcaClient", "ArcaCrypto", "ArcaProtocol", "ArcaSystem", "ArcaThreads", "CArcaGcrypt", "CGcrypt",
                "CSystemd",
            ]),
        .executableTarget(
            name: "arca-secretd", dependencies: ["ArcaSecretService", "ArcaClient", "ArcaProtocol", "ArcaSystem"],
            linkerSettings: staticExecutable),
        .testTarget(
            name: "ArcaSecretServiceTests", dependencies: ["ArcaSecretService", "ArcaCrypto"],
            resources: [.copy("Resources")]),

        // Fleets (ARCHITECTURE §13): signed, sealed records in etcd, applied by a root host agent.
        // `arca fleet ...` execs arca-fleetd, so the static CLI stays free of network code.
        .target(
            name: "ArcaFleet", dependencies: ["ArcaClient", "ArcaCrypto", "ArcaProtocol", "ArcaSystem", "CSodium"]),
        .executableTarget(name: "arca-fleetd", dependencies: ["ArcaFleet"], linkerSettings: staticFoundationExecutable),
        .testTarget(
            name: "ArcaFleetTests",
            dependencies: ["ArcaFleet", "ArcaCrypto", "ArcaTestSupport", "arca-test-spawn-probe"]),
        .executableTarget(
            name: "arca-test-spawn-probe", dependencies: ["ArcaFleet", "ArcaSystem"], path: "Tests/ArcaFleetSpawnProbe"),
        .executableTarget(
            name: "bench-fleet", dependencies: ["ArcaFleet", "ArcaCrypto"], path: "bench/fleet", exclude: ["run.sh"]),

        // The per-user sync agent (ARCHITECTURE §12): carries ciphertext between the user's Syncthing
        // folder and arcad, and sets Syncthing up over its loopback REST API. `arca sync VERB` execs it.
        .target(
            name: "ArcaSyncAgent",
            dependencies: ["ArcaSystem", "ArcaThreads", "ArcaCrypto", "ArcaProtocol", "ArcaClient", "ArcaSync"]),
        .executableTarget(
            name: "arca-sync", dependencies: ["ArcaSyncAgent"], linkerSettings: staticFoundationExecutable),
        .testTarget(name: "ArcaSyncAgentTests", dependencies: ["ArcaSyncAgent"]),
    ],
    swiftLanguageModes: [.v6]
)
