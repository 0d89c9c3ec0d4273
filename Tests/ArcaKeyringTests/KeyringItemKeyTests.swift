import Testing

@testable import ArcaKeyring

@Suite("Item key descriptions (no root needed)")
struct KeyringItemKeyTests {
    @Test("a plain generic password is short enough to type")
    func genericPasswordCommonCase() {
        let key = KeyringItemKey.genericPassword(GenericPasswordKey(service: "mail", account: "alice"))
        #expect(key.keyDescription == "arca:genp:mail:alice")
    }

    @Test("optional generic-password fields appear only when set, in a fixed order")
    func genericPasswordOptions() {
        let key = KeyringItemKey.genericPassword(
            GenericPasswordKey(
                service: "mail", account: "alice", accessGroup: "com.example.shared", synchronizable: true))
        #expect(key.keyDescription == "arca:genp:mail:alice:g=com.example.shared:sync")
    }

    @Test("an internet password carries every primary-key attribute that is set")
    func internetPassword() {
        let key = KeyringItemKey.internetPassword(
            InternetPasswordKey(
                server: "example.com", account: "bob", protocol: "htps", port: 8443, path: "/login",
                securityDomain: "realm", authenticationType: "form", accessGroup: "g1", synchronizable: true))
        #expect(
            key.keyDescription
                == "arca:inet:example.com:bob:proto=htps:port=8443:path=/login:domain=realm:auth=form:g=g1:sync")
        let minimal = KeyringItemKey.internetPassword(InternetPasswordKey(server: "example.com", account: "bob"))
        #expect(minimal.keyDescription == "arca:inet:example.com:bob")
    }

    @Test("colon, percent and control bytes are escaped; UTF-8 stays readable")
    func escaping() {
        let key = KeyringItemKey.genericPassword(
            GenericPasswordKey(service: "https://h:8080/%x", account: "é\n\u{7f}"))
        #expect(key.keyDescription == "arca:genp:https%3A//h%3A8080/%25x:é%0A%7F")
    }

    @Test(
        "parsing the description gives the key back",
        arguments: [
            KeyringItemKey.genericPassword(GenericPasswordKey(service: "", account: "")),
            .genericPassword(GenericPasswordKey(service: "a:b", account: "%%", accessGroup: "g=h:i")),
            .genericPassword(GenericPasswordKey(service: "s", account: "a", synchronizable: true)),
            .internetPassword(InternetPasswordKey(server: "h", account: "u", port: 1)),
            .internetPassword(InternetPasswordKey(server: "h", account: "u", path: "/a:b", accessGroup: "x")),
            .internetPassword(
                InternetPasswordKey(server: "inet", account: "genp", protocol: "ssh ", authenticationType: "dflt")),
        ])
    func roundTrip(key: KeyringItemKey) {
        #expect(KeyringItemKey(keyDescription: key.keyDescription) == key)
    }

    @Test(
        "every non-canonical spelling is rejected",
        arguments: [
            "arca:genp:mail",  // too few fields
            "arcb:genp:mail:alice",  // wrong prefix
            "arca:cert:mail:alice",  // unknown class
            "arca:genp:m%3aail:alice",  // lower-case hex
            "arca:genp:m%41il:alice",  // needless escape
            "arca:genp:mail:alice:g=",  // default value spelled out
            "arca:genp:mail:alice:sync:g=x",  // wrong order
            "arca:genp:mail:alice:extra",  // unknown option
            "arca:inet:h:u:port=0",  // default port
            "arca:inet:h:u:port=080",  // leading zero
            "arca:inet:h:u:port=70000",  // out of range
            "arca:genp:mail:al%2",  // truncated escape
            "arca:genp:mail:%FF",  // not UTF-8
        ])
    func rejectsNonCanonical(text: String) {
        #expect(KeyringItemKey(keyDescription: text) == nil)
    }

    @Test("different primary keys never share a description")
    func uniqueness() {
        let keys: [KeyringItemKey] = [
            .genericPassword(GenericPasswordKey(service: "a:b", account: "c")),
            .genericPassword(GenericPasswordKey(service: "a", account: "b:c")),
            .genericPassword(GenericPasswordKey(service: "a", account: "b", accessGroup: "c")),
            .genericPassword(GenericPasswordKey(service: "a", account: "b", synchronizable: true)),
            .genericPassword(GenericPasswordKey(service: "a", account: "b:sync")),
            .internetPassword(InternetPasswordKey(server: "a", account: "b")),
            .internetPassword(InternetPasswordKey(server: "a", account: "b", protocol: "c")),
            .internetPassword(InternetPasswordKey(server: "a", account: "b", path: "c")),
        ]
        #expect(Set(keys.map(\.keyDescription)).count == keys.count)
    }
}

@Suite("Errno, describe records and /proc/key-users (no root needed)")
struct KeyringValueTests {
    @Test("named errno values carry the kernel's numbers")
    func errnoNumbers() {
        #expect(KeyringErrno.noKey.rawValue == 126)
        #expect(KeyringErrno.keyExpired.rawValue == 127)
        #expect(KeyringErrno.keyRevoked.rawValue == 128)
        #expect(KeyringErrno.quotaExceeded.rawValue == 122)
        #expect(KeyringErrno.permissionDenied.rawValue == 13)
        #expect(KeyringErrno.noKernelSupport.rawValue == 38)
        #expect(KeyringErrno.keyRevoked.name == "EKEYREVOKED")
        #expect(KeyringErrno.noKey.description == "ENOKEY (Required key not available)")
    }

    @Test("ENOSYS maps to 'no keyring support', everything else keeps its errno")
    func errorMapping() {
        #expect(KeyringError.from(.noKernelSupport, operation: "add_key") == .noKernelSupport)
        #expect(KeyringError.noKernelSupport.description == "this kernel has no keyring support (ENOSYS)")
        #expect(
            KeyringError.from(.quotaExceeded, operation: "add_key") == .system(.quotaExceeded, operation: "add_key"))
        #expect(KeyringError.from(.keyRevoked, operation: "keyctl_read").errno == .keyRevoked)
    }

    @Test("a describe record is split into its five fields; the description may hold ';'")
    func describeRecord() throws {
        let parsed = try #require(KeyDescription(record: "user;0;65534;0b3f0000;arca:genp:a;b:c"))
        #expect(parsed.type == "user")
        #expect(parsed.uid == 0)
        #expect(parsed.gid == 65534)
        #expect(parsed.permissions == 0x0b3f_0000)
        #expect(parsed.description == "arca:genp:a;b:c")
        #expect(KeyDescription(record: "user;x;0;0;d") == nil)
    }

    @Test("a /proc/key-users line gives usage and headroom")
    func keyUsers() {
        let lines = KeyQuota.parse("    0:    79 78/78 75/1000000 2040/25000000\n 1000:     2 2/2 2/200 16/20000\n")
        #expect(lines.count == 2)
        #expect(lines[0].uid == 0)
        #expect(lines[0].keys == 78)
        #expect(lines[0].quotaKeys == 75)
        #expect(lines[0].headroomKeys == 999_925)
        #expect(lines[0].headroomBytes == 24_997_960)
        #expect(lines[1] == lines[1])
        #expect(lines[1].maximumKeys == 200)
        #expect(lines[1].quotaBytes == 16)
    }
}
