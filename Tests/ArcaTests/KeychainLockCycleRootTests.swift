import ArcaKeyring
import ArcaLibTestSupport
import ArcaTestSupport
import Testing

/// The lock cycle through the library, as a throwaway user (so that locking
/// touches only that user's vault and keyring): a whenUnlocked item is read
/// from the kernel, then is an error — never nil, never a stale kernel copy —
/// while locked, and comes back with the unlock.
@Suite struct KeychainLockCycleRootTests {
    @Test func lockedItemsAreErrorsAndComeBackOnUnlock_root() throws {
        let socket = try LiveArcad.startWithoutVault()
        try withThrowawayUsers(1, prefix: "arcal", cleanup: { _ = KeyringLayout().purge(user: $0.uid) }) { users in
            let result = try users[0].run([builtExecutable("arca-lib-probe"), socket])
            #expect(result.status == 0)
            #expect(
                result.stdout.split(separator: "\n").map(String.init) == [
                    "enroll: ok",
                    "set: ok",
                    "set afu: ok",
                    "get: v1 from kernel",
                    "get missing: nil",
                    "lock: ok",
                    "get locked: error -25308",
                    // Absent while only whenUnlocked is locked: not found, as on Apple platforms.
                    "get missing locked: nil",
                    "get afu: v2 from kernel",
                    "unlock: ok",
                    "get unlocked: v1 from kernel",
                    "lock all: ok",
                    "get afu locked: error -25308",
                    "get missing all locked: error -25308",
                ])
        }
    }
}
