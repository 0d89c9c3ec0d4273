// swift-tools-version:6.0
// Arca — a Keychain for Linux. The layering below is the one of ARCHITECTURE §3:
// C only through the system-library targets, and `unsafeFlags` only on the
// executables and the PAM module, so that other packages can depend on the
// `Arca` and `ArcaSecurity` library products.
import PackageDescription

/// Executables link the Swift runtime statically: they must run with the
/// toolchain's directory hidden, and `arca get` must start in about 2 ms.
let staticExecutable: [LinkerSetting] = [
    .unsafeFlags(["-static-stdlib"]),
    // The CLI links `Arca`, which uses FoundationEssentials; with -static-stdlib SwiftPM
    // links its archive but not the two helper archives under it.
    .linkedLibrary("_FoundationCollections"), .linkedLibrary("_FoundationCShims"),
]

/// The PAM module: static Swift runtime, only `pam_sm_*` exported, every symbol
/// resolved at link time, and never unloaded by `pam_end`.
/// lld, because gold leaves the Swift type descriptors that the version script
/// localizes in .dynsym (as LOCAL entries); lld drops them.
let pamModuleLinkage: [LinkerSetting] = [
    .unsafeFlags([
        "-static-stdlib", "-use-ld=lld",
        "-Xlinker", "--version-script=\(Context.packageDirectory)/pam/pam_arca.map",
        "-Xlinker", "-z", "-Xlinker", "defs",
        "-Xlinker", "-z", "-Xlinker", "nodelete",
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

        // Core modules.
        .target(name: "ArcaCrypto", dependencies: ["CSodium"]),
        .target(name: "ArcaProtocol"),
        // Sync records, their signatures and the merge (ARCHITECTURE §12): pure logic, no I/O.
        .target(name: "ArcaSync", dependencies: ["ArcaCrypto"]),
        .target(name: "ArcaKeyring", dependencies: ["CKeyutils", "ArcaCrypto"]),
        .target(name: "ArcaVault", dependencies: ["ArcaCrypto", "ArcaProtocol", "CSQLite"]),
        .target(
            name: "ArcaDaemon",
            dependencies: ["ArcaCrypto", "ArcaProtocol", "ArcaKeyring", "ArcaVault", "ArcaSync", "CSystemd"]),

        // Public library products: no unsafe flags anywhere below them.
        .target(name: "Arca", dependencies: ["ArcaProtocol", "ArcaKeyring", "ArcaCrypto"]),
        .target(name: "ArcaSecurity", dependencies: ["Arca", "ArcaProtocol"]),

        // Executables.
        .executableTarget(name: "arcad", dependencies: ["ArcaDaemon"], linkerSettings: staticExecutable),
        // The CLI's logic is a library (no unsafe flags) so its tests parse in-process.
        .target(name: "ArcaCLI", dependencies: ["ArcaProtocol", "ArcaKeyring", "ArcaCrypto"]),
        // Fully static: a dynamically linked Swift binary spends ~2 ms in the loader
        // (libstdc++ symbol lookups, page faults) before main; `arca get` must stay
        // close to `keyctl print` (bench/cli).
        .executableTarget(
            name: "arca", dependencies: ["ArcaCLI"], linkerSettings: [.unsafeFlags(["-static-executable"])]),

        // The PAM module: a C shim exporting pam_sm_* over a small Swift core.
        // ArcaCrypto brings SecretBytes and Argon2id: no Foundation, no threads, so it
        // is safe inside a module that libpam loads into any process that may fork.
        .target(name: "ArcaPAM", dependencies: ["CPAM", "CSodium", "ArcaProtocol", "ArcaCrypto"]),
        .target(name: "PAMShim", dependencies: ["ArcaPAM", "CPAM"], linkerSettings: pamModuleLinkage),

        // A stand-in arcad that records what pam_arca.so sends (Tests/integration/3x-pam-*.sh, bench/pam).
        .executableTarget(
            name: "arca-test-arcad-recorder", dependencies: ["ArcaProtocol", "ArcaCrypto"],
            path: "Tests/ArcaPAMRecorder"),
        // Runs PAM steps with forks and fresh handles between them (sshd/xrdp shapes), and timed loops for bench/pam.
        .executableTarget(
            name: "arca-test-pam-driver", dependencies: ["CPAM", "ArcaProtocol"], path: "Tests/ArcaPAMDriver"),
        .testTarget(name: "ArcaPAMTests", dependencies: ["ArcaPAM", "ArcaCrypto", "ArcaProtocol", "CPAM"]),

        // Benchmarks: `make bench` runs each bench/NAME in one go.
        .executableTarget(name: "bench-kdf", dependencies: ["ArcaCrypto", "CSodium"], path: "bench/kdf"),
        .executableTarget(
            name: "bench-arcad", dependencies: ["ArcaProtocol", "ArcaCrypto", "ArcaKeyring"], path: "bench/arcad",
            exclude: ["run.sh"]),
        .executableTarget(name: "bench-sync", dependencies: ["ArcaSync", "ArcaCrypto"], path: "bench/sync"),
        .executableTarget(
            name: "bench-keyring", dependencies: ["ArcaKeyring", "ArcaCrypto", "CKeyutils"], path: "bench/keyring"),

        // Tests mirror Sources/.
        .testTarget(name: "ArcaVaultTests", dependencies: ["ArcaVault", "arca-vault-crashtest"]),
        .executableTarget(
            name: "arca-vault-crashtest", dependencies: ["ArcaVault"], path: "Tests/ArcaVaultCrashChild"),
        .executableTarget(name: "bench-vault", dependencies: ["ArcaVault"], path: "bench/vault"),
        .testTarget(
            name: "ArcaCryptoTests", dependencies: ["ArcaCrypto"], resources: [.copy("Resources")]),
        .testTarget(name: "ArcaDaemonTests", dependencies: ["ArcaDaemon", "ArcaTestSupport"]),
        // arcad end to end: the real binary, real sockets, real kernel, throwaway users.
        // (arcad is not a dependency: its -static-stdlib would leak into the test bundle's
        // link; `swift build --build-tests` builds it anyway.)
        .target(name: "ArcaTestSupport", path: "Tests/ArcaTestSupport"),
        .executableTarget(name: "arcad-probe", dependencies: ["ArcaProtocol"], path: "Tests/ArcadProbe"),
        .testTarget(
            name: "ArcadTests",
            dependencies: ["ArcaProtocol", "ArcaCrypto", "ArcaKeyring", "ArcaTestSupport", "arcad-probe",
                           "arca-keyring-probe"]),
        .testTarget(name: "ArcaProtocolTests", dependencies: ["ArcaProtocol"]),
        // The library products: unit tests, and live tests against a real arcad.
        .target(
            name: "ArcaLibTestSupport",
            dependencies: ["Arca", "ArcaCrypto", "ArcaKeyring", "ArcaProtocol", "ArcaTestSupport"],
            path: "Tests/ArcaLibTestSupport"),
        .testTarget(
            name: "ArcaTests",
            dependencies: ["Arca", "ArcaProtocol", "ArcaKeyring", "ArcaLibTestSupport", "arca-lib-probe"]),
        .executableTarget(name: "arca-lib-probe", dependencies: ["Arca", "ArcaProtocol"], path: "Tests/ArcaLibProbe"),
        .testTarget(
            name: "ArcaSecurityTests",
            dependencies: ["ArcaSecurity", "ArcaProtocol", "ArcaLibTestSupport", "ArcaExamples"]),
        .target(name: "ArcaExamples", dependencies: ["ArcaSecurity"], path: "Examples"),
        .executableTarget(
            name: "bench-api", dependencies: ["Arca", "ArcaProtocol", "ArcaKeyring", "ArcaCrypto", "CKeyutils"],
            path: "bench/api", exclude: ["run.sh"]),
        // The keyring tests run the probe as throwaway users (setpriv) to read as them.
        .executableTarget(
            name: "arca-keyring-probe", dependencies: ["ArcaKeyring", "ArcaCrypto"], path: "Tests/ArcaKeyringProbe"),
        .testTarget(
            name: "ArcaKeyringTests",
            dependencies: ["ArcaKeyring", "ArcaCrypto", "ArcaTestSupport", "arca-keyring-probe"]),
        .testTarget(name: "ArcaSyncTests", dependencies: ["ArcaSync", "ArcaCrypto"]),
        .testTarget(name: "ArcaCLITests", dependencies: ["ArcaCLI", "ArcaProtocol", "ArcaCrypto"]),

        // The freedesktop Secret Service provider (arca-secretd).
        .target(name: "ArcaSecretService", dependencies: ["ArcaCrypto", "ArcaProtocol", "CGcrypt", "CSystemd"]),
        .executableTarget(
            name: "arca-secretd", dependencies: ["ArcaSecretService"], linkerSettings: staticExecutable),
        .testTarget(
            name: "ArcaSecretServiceTests", dependencies: ["ArcaSecretService", "ArcaCrypto"],
            resources: [.copy("Resources")]),
    ],
    swiftLanguageModes: [.v5]
)
