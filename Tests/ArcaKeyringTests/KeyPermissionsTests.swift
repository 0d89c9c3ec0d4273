import Testing

@testable import ArcaKeyring

@Suite("KeyPermissions: the named bits are the kernel's masks")
struct KeyPermissionsTests {
    @Test("Arca's masks, bit for bit")
    func masks() {
        #expect(KeyringLayout.itemPermissions.rawValue == 0x0b3f_0000)
        #expect(KeyringLayout.ringPermissions.rawValue == 0x0b3f_0000)
        #expect(KeyPermissions.userAll.rawValue == 0x003f_0000)
        #expect(KeyPermissions([.possessorAll, .userAll, .groupAll, .otherAll]).rawValue == 0x3f3f_3f3f)
        // The kernel's default for a new @u (CArcaSystem's ARCA_USER_KEYRING_DEFAULT_PERM).
        let defaultUserKeyring: KeyPermissions = [
            .possessorView, .possessorRead, .possessorWrite, .possessorSearch, .possessorLink, .userAll,
        ]
        #expect(defaultUserKeyring.rawValue == UserKeyringSwitch.defaultUserKeyringPermissions)
    }

    @Test("each class's bits sit in its own byte (<linux/keyctl.h> values)")
    func bits() {
        #expect(KeyPermissions.possessorView.rawValue == 0x0100_0000)
        #expect(KeyPermissions.possessorSetAttribute.rawValue == 0x2000_0000)
        #expect(KeyPermissions.userRead.rawValue == 0x0002_0000)
        #expect(KeyPermissions.userSearch.rawValue == 0x0008_0000)
        #expect(KeyPermissions.userLink.rawValue == 0x0010_0000)
        #expect(KeyPermissions.groupAll.rawValue == 0x0000_3f00)
        #expect(KeyPermissions.otherAll.rawValue == 0x0000_003f)
    }
}
