import Foundation
import Testing

@testable import ArcaFleet

@Suite("Fleet formats: fleet.conf, etcdctl JSON, txn quoting, names, options")
struct FleetFormatTests {
    @Test("fleet.conf parses keys, defaults and comments")
    func config() throws {
        let config = try FleetConfig.parse(
            """
            # a comment
            endpoints = https://a:2379, https://b:2379
            cacert = /ca.pem
            cert = /c.pem
            key = /k.pem   # trailing comment
            host = web-1
            prefix = /x
            """)
        #expect(config.etcd.endpoints == ["https://a:2379", "https://b:2379"])
        #expect(config.etcd.key == "/k.pem")
        #expect(config.host == "web-1")
        #expect(config.prefix == "/x/")
        #expect(config.socket == "/run/arca/arcad.sock")
        #expect(config.resyncSeconds == 60)
        #expect(config.adminKey == nil)
    }

    @Test("fleet.conf errors name the problem")
    func configErrors() {
        #expect(throws: FleetError.usage("fleet.conf line 1: not a known `key = value`")) {
            try FleetConfig.parse("colour = blue")
        }
        #expect(throws: FleetError.usage("fleet.conf needs endpoints, cacert, cert and key")) {
            try FleetConfig.parse("endpoints = x")
        }
        #expect(throws: FleetError.usage("fleet.conf: admin_key is not a base64 Ed25519 public key")) {
            try FleetConfig.parse("endpoints = x\ncacert = a\ncert = b\nkey = c\nadmin_key = AAAA")
        }
    }

    @Test("setting a key replaces its line")
    func setting() {
        #expect(FleetConfig.setting("host", to: "h2", in: "a = 1\nhost = h1\n") == "a = 1\nhost = h2\n")
        #expect(FleetConfig.setting("host", to: "h2", in: "") == "host = h2\n")
    }

    @Test("etcdctl get, txn and failed-txn JSON decode")
    func etcdJSON() throws {
        let get =
            #"{"header":{"cluster_id":14841639068965178418,"revision":2},"kvs":[{"key":"L3QvazE=","create_revision":2,"mod_revision":2,"version":1,"value":"eHk="}],"count":1}"#
        #expect(
            try EtcdJSON.range(Array(get.utf8))
                == EtcdRange(
                    revision: 2, values: [EtcdKeyValue(key: "/t/k1", value: Array("xy".utf8), modRevision: 2)]))
        let txn =
            #"{"header":{"revision":3},"succeeded":true,"responses":[{"Response":{"ResponseRange":{"header":{"revision":3},"kvs":[{"key":"L3QvazE=","mod_revision":2,"value":"eHk="}],"count":1}}},{"Response":{"ResponseRange":{"header":{"revision":3}}}}]}"#
        #expect(try EtcdJSON.transactionReads(Array(txn.utf8)).values.map(\.key) == ["/t/k1"])
        #expect(try EtcdJSON.succeeded(Array(txn.utf8)))
        #expect(try !EtcdJSON.succeeded(Array(#"{"header":{"revision":3}}"#.utf8)))
        #expect(throws: FleetError.etcd("unexpected etcdctl output")) { try EtcdJSON.range(Array("Error".utf8)) }
    }

    @Test("txn values are Go-quoted: quotes and backslashes escaped, other bytes as \\x")
    func quoting() {
        #expect(EtcdJSON.quoted(Array(#"{"a":"b\/c"}"#.utf8)) == #""{\"a\":\"b\\/c\"}""#)
        #expect(EtcdJSON.quoted([0x0a, 0x41]) == #""\x0aA""#)
    }

    @Test("etcdctl errors are summarised to their Error: line")
    func summary() {
        #expect(
            EtcdCtl.summarize("{\"level\":\"warn\"}\nError: context deadline exceeded\n") == "context deadline exceeded"
        )
    }

    @Test("host and group names: lowercase letters, digits, dot and dash")
    func names() throws {
        #expect(FleetName.isValid("web-1.example"))
        for bad in ["", "-x", ".x", "Web", "a/b", "a b", String(repeating: "a", count: 64)] {
            #expect(!FleetName.isValid(bad), "\(bad)")
        }
        #expect(try FleetName.itemID(service: "db", account: "app").count == 32)
        #expect(try FleetName.itemID(service: "db", account: "app") != FleetName.itemID(service: "dba", account: "pp"))
    }

    @Test("options: values, lists, short letters; unknown or unused options are usage errors")
    func options() throws {
        var options = try FleetOptions.parse([
            "put", "-s", "db", "--account=app", "--allow-user", "a,b", "--allow-user", "c",
        ])
        #expect(try options.required("service") == "db")
        #expect(try options.required("account") == "app")
        #expect(options.list("allow-user") == ["a", "b", "c"])
        try options.done()
        #expect(throws: FleetError.usage("unknown option --colour")) { try FleetOptions.parse(["put", "--colour"]) }
        let unused = try FleetOptions.parse(["revoke", "--group", "web"])
        #expect(throws: FleetError.usage("revoke does not take --group")) { try unused.done() }
        #expect(throws: FleetError.usage("--group needs a value")) { try FleetOptions.parse(["put", "--group"]) }
    }

    @Test("exit codes: one per error kind")
    func exitCodes() {
        let errors: [FleetError] = [
            .usage(""), .etcd(""), .conflict, .verification(""), .arcad(""), .notFound(""),
            .exists(""), .crypto(""),
        ]
        #expect(errors.map(\.exitCode) == [2, 3, 4, 5, 6, 7, 8, 1])
    }
}
