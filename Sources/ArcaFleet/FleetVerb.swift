/// One verb of arca-fleetd(8): its name, the flags it takes and its handler, as the `arca` CLI's
/// command table holds them (keyctl's `{ act_keyctl_padd, "padd" }`): `FleetCLI.execute` finds
/// the row and runs it, so a verb lives in one place, and an unknown verb or a flag or valued
/// option the verb does not take is refused before anything runs (fleet.conf is not even read).
struct FleetVerb: Sendable {
    /// What a verb needs besides its options.
    enum Handler: Sendable {
        /// `join`: writes fleet.conf at the path given (which need not exist yet).
        case writesConfig(@Sendable (inout FleetOptions, String) throws(FleetError) -> Void)
        /// Every other verb: works on the fleet that fleet.conf names.
        case readsConfig(@Sendable (inout FleetOptions, Fleet) throws(FleetError) -> Void)
        /// `help`: prints the usage text, as `--help` does; it takes nothing else.
        case printsUsage
    }

    /// The fleet of a loaded fleet.conf: its settings, etcd and the admin verbs over them.
    struct Fleet {
        let config: FleetConfig
        let etcd: EtcdCtl
        let admin: FleetAdmin
    }

    let name: String
    /// The flags (`--json`, `--local`) the verb takes; any other is a usage error.
    let flags: Set<String>
    /// The valued options (`--group G`) the verb takes, besides the global `--conf`; any other
    /// is a usage error. The handler's ``FleetOptions/done()`` checks what it really read.
    let values: Set<String>
    let handler: Handler

    init(name: String, flags: Set<String> = [], values: Set<String> = [], handler: Handler) {
        self.name = name
        self.flags = flags
        self.values = values
        self.handler = handler
    }

    /// The valued options of put and rotate.
    private static let itemValues: Set<String> = [
        "service", "account", "group", "allow-user", "allow-group", "allow-unit",
    ]

    /// The row of `name`, or nil.
    static func named(_ name: String) -> FleetVerb? { all.first { $0.name == name } }

    /// Every verb, in the order of the usage text (`help`, which it does not list, last).
    static let all: [FleetVerb] = [
        FleetVerb(name: "init", values: ["manifest-lifetime"], handler: .readsConfig(initialize)),
        FleetVerb(name: "join", values: ["host", "admin-key"], handler: .writesConfig(FleetCLI.join)),
        FleetVerb(name: "hosts", flags: ["json"], handler: .readsConfig(hosts)),
        FleetVerb(name: "approve", values: ["group"], handler: .readsConfig(approve)),
        FleetVerb(name: "remove", handler: .readsConfig(remove)),
        FleetVerb(name: "put", values: itemValues, handler: .readsConfig(put)),
        FleetVerb(name: "rotate", values: itemValues, handler: .readsConfig(rotate)),
        FleetVerb(name: "revoke", values: ["service", "account"], handler: .readsConfig(revoke)),
        FleetVerb(name: "refresh", handler: .readsConfig(refresh)),
        FleetVerb(name: "status", flags: ["json", "local"], handler: .readsConfig(status)),
        FleetVerb(name: "run", handler: .readsConfig(run)),
        FleetVerb(name: "help", handler: .printsUsage),
    ]

    static func initialize(_ options: inout FleetOptions, _ fleet: Fleet) throws(FleetError) {
        let lifetime = Int64(options.value("manifest-lifetime") ?? "86400") ?? 0
        guard lifetime > 0 else { throw .usage("--manifest-lifetime takes seconds") }
        try options.done()
        let key = try fleet.admin.initialize(manifestLifetime: lifetime)
        FleetCLI.write(1, "admin key: \(key)\n")
    }

    static func approve(_ options: inout FleetOptions, _ fleet: Fleet) throws(FleetError) {
        let hosts = try options.positionals("HOST")
        let groups = options.list("group")
        guard !groups.isEmpty, groups.allSatisfy(FleetName.isValid) else { throw .usage("approve needs --group") }
        try options.done()
        try fleet.admin.approve(hosts, groups: groups)
    }

    static func remove(_ options: inout FleetOptions, _ fleet: Fleet) throws(FleetError) {
        let host = try options.positional("HOST")
        try options.done()
        try fleet.admin.remove(host)
    }

    static func put(_ options: inout FleetOptions, _ fleet: Fleet) throws(FleetError) {
        try store(&options, fleet, rotate: false)
    }

    static func rotate(_ options: inout FleetOptions, _ fleet: Fleet) throws(FleetError) {
        try store(&options, fleet, rotate: true)
    }

    /// put (a new item) and rotate (a new version of one).
    static func store(_ options: inout FleetOptions, _ fleet: Fleet, rotate: Bool) throws(FleetError) {
        let service = try options.required("service")
        let account = try options.required("account")
        let group = options.value("group")
        if let group, !FleetName.isValid(group) { throw .usage("bad group name \(group)") }
        let grants = FleetGrants(
            users: options.list("allow-user"), groups: options.list("allow-group"),
            units: options.list("allow-unit"))
        try options.done()
        let secret = try FleetCLI.readSecret()
        let version = try fleet.admin.put(
            service: service, account: account, group: group, grants: grants.isEmpty && rotate ? nil : grants,
            secret: secret, rotate: rotate)
        FleetCLI.write(1, "\(service)/\(account) v\(version)\n")
    }

    static func revoke(_ options: inout FleetOptions, _ fleet: Fleet) throws(FleetError) {
        let service = try options.required("service")
        let account = try options.required("account")
        try options.done()
        try fleet.admin.revoke(service: service, account: account)
    }

    static func refresh(_ options: inout FleetOptions, _ fleet: Fleet) throws(FleetError) {
        try options.done()
        try fleet.admin.refresh()
    }

    static func hosts(_ options: inout FleetOptions, _ fleet: Fleet) throws(FleetError) {
        let json = options.flags.contains("json")
        try options.done()
        FleetCLI.write(1, FleetReport.hosts(try fleet.admin.snapshot(try fleet.admin.key()), json: json))
    }

    static func status(_ options: inout FleetOptions, _ fleet: Fleet) throws(FleetError) {
        let json = options.flags.contains("json")
        let local = options.flags.contains("local")
        try options.done()
        if local {
            FleetCLI.write(
                1, FleetReport.local(HostAgent.savedState(fleet.config), host: fleet.config.host ?? "?", json: json))
        } else {
            FleetCLI.write(1, FleetReport.status(try fleet.admin.snapshot(try fleet.admin.key()), json: json))
        }
    }

    static func run(_ options: inout FleetOptions, _ fleet: Fleet) throws(FleetError) {
        try options.done()
        try HostAgent(config: fleet.config, etcd: fleet.etcd).run()
    }
}
