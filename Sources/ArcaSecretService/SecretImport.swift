import ArcaCrypto
import ArcaProtocol

/// `arca-secretd --import` (`arca import --from secret-service`): copies every item of
/// a collection of the running provider (gnome-keyring, kwalletd, KeePassXC…) into
/// the user's login collection in arcad, through the Secret Service API as any client.
/// The source is only read; an item already present (same label, attributes and
/// secret) is skipped, so running it again imports nothing.
public struct SecretImport {
    /// What to import, and how.
    public struct Options: Sendable {
        /// The provider's bus name.
        public var busName = SecretService.busName
        /// `--collection`: an alias, a collection name or an object path; nil: `default`.
        public var collection: String?
        /// Read and count; write nothing.
        public var dryRun = false

        /// The defaults: the default collection of `org.freedesktop.secrets`.
        public init() {}
    }

    /// An item that was not imported, and why.
    public struct Failure: Sendable, Equatable {
        /// The item's object path at the source.
        public let path: String
        /// The item's label (empty if it could not be read).
        public let label: String
        /// Why (never the secret).
        public let reason: String
    }

    /// The counts of a run.
    public struct Summary: Sendable, Equatable {
        /// The source collection's object path.
        public let collection: String
        /// Whether nothing was written.
        public let dryRun: Bool
        /// Items written (with `dryRun`: that would be written).
        public internal(set) var imported = 0
        /// Items already in Arca with the same label, attributes and secret.
        public internal(set) var skipped = 0
        /// Items that could not be imported.
        public internal(set) var failed: [Failure] = []
    }

    /// Why the import could not run at all.
    public enum ImportError: Error, CustomStringConvertible {
        case noProvider(String)
        case noCollection(String)
        case dismissed(String)
        case arcadLocked
        case arcad(String)
        case bus(BusError)

        public var description: String {
            switch self {
            case .noProvider(let name): "nothing owns \(name) on the session bus: start the provider to import from"
            case .noCollection(let c): "the provider has no collection \(c)"
            case .dismissed(let c): "unlocking \(c) was dismissed at the provider's prompt; nothing imported"
            case .arcadLocked: "Arca's login collection is locked: run arca unlock first"
            case .arcad(let m): "arcad: \(m)"
            case .bus(let e): "session bus: \(e)"
            }
        }
    }

    let source: SecretSource
    let arcad: ArcadLink
    let options: Options

    /// Secrets fetched per GetSecrets call.
    static let batchSize = 100

    /// Connects to the session bus and to arcad (as `uid`, at `socketPath`).
    public init(uid: UInt32, socketPath: String, options: Options) throws(ImportError) {
        do {
            source = SecretSource(bus: try BusConnection.openSession(), name: options.busName)
        } catch {
            throw .bus(error)
        }
        arcad = ArcadLink(uid: uid, socketPath: socketPath)
        self.options = options
    }

    /// Reads the source and writes what is missing into Arca.
    public func run() throws(ImportError) -> Summary {
        do {
            return try importAll()
        } catch let error as ImportError {
            throw error
        } catch let error as BusError {
            throw .bus(error)
        } catch let error as SecretError {
            throw .arcad(error.message)
        } catch {
            throw .arcad("\(error)")
        }
    }

    private func importAll() throws -> Summary {
        guard try source.isRunning() else { throw ImportError.noProvider(options.busName) }
        let settings = try arcad.collectionSettings()
        guard !settings.isLocked(unlocked: arcad.unlockedClasses()) else { throw ImportError.arcadLocked }
        guard let collection = try source.collectionPath(options.collection) else {
            throw ImportError.noCollection(options.collection ?? "default")
        }
        guard try source.unlock(collection) else { throw ImportError.dismissed(collection) }
        var summary = Summary(collection: collection, dryRun: options.dryRun)
        let session = try source.openSession()
        defer { source.closeSession(session) }
        let paths = try source.items(in: collection)
        for start in stride(from: 0, to: paths.count, by: Self.batchSize) {
            let batch = Array(paths[start..<min(start + Self.batchSize, paths.count)])
            let secrets = try source.secrets(batch, session: session)
            for path in batch { summary.record(path, outcome(path, secrets[path])) }
        }
        return summary
    }

    /// What became of one item (never throws: a failure is counted with its reason).
    private func outcome(_ path: String, _ secret: SourceSecret?) -> Outcome {
        let item: SourceItem
        do {
            item = try source.item(path)
        } catch {
            return .failed(label: "", reason: "cannot read it: \(error)")
        }
        guard let secret else { return .failed(label: item.label, reason: "the provider keeps it locked") }
        do throws(SecretError) {
            if try isPresent(item, secret) { return .skipped }
            if !options.dryRun { try write(item, secret) }
            return .imported
        } catch {
            return .failed(label: item.label, reason: error.message)
        }
    }

    enum Outcome {
        case imported
        case skipped
        case failed(label: String, reason: String)
    }

    /// Whether Arca holds an item with exactly this label, attributes and secret.
    private func isPresent(_ item: SourceItem, _ secret: SourceSecret) throws(SecretError) -> Bool {
        var list = try arcad.items(
            .searchAttributeItems(uid: arcad.uid, attributes: item.attributes, returnSecrets: true))
        defer { for i in list.items.indices { SecureWipe.zero(&list.items[i].secret) } }
        return list.items.contains { candidate in
            guard candidate.attributes == item.attributes, candidate.label == item.label,
                let stored = candidate.secret
            else { return false }
            return secret.value.withUnsafeBytes { $0.elementsEqual(stored) }
        }
    }

    private func write(_ item: SourceItem, _ secret: SourceSecret) throws(SecretError) {
        var bytes = secret.value.withUnsafeBytes { Array($0) }
        defer { SecureWipe.zero(&bytes) }
        _ = try arcad.items(
            .addAttributeItem(
                AttributeItemAdd(
                    uid: arcad.uid, label: item.label, attributes: item.attributes, contentType: secret.contentType,
                    secret: bytes)))
    }
}

extension SecretImport.Summary {
    mutating func record(_ path: String, _ outcome: SecretImport.Outcome) {
        switch outcome {
        case .imported: imported += 1
        case .skipped: skipped += 1
        case .failed(let label, let reason):
            failed.append(SecretImport.Failure(path: path, label: label, reason: reason))
        }
    }

    /// The counts as people read them.
    public var text: String {
        var lines = [
            "\(dryRun ? "would import" : "imported") \(imported), skipped \(skipped) already present, "
                + "failed \(failed.count) (from \(collection))"
        ]
        for f in failed { lines.append("failed: \(f.path) \(JSONText.quote(f.label)): \(f.reason)") }
        return lines.joined(separator: "\n")
    }

    /// The counts as JSON (schema in arca-secretd(1)), one line.
    public var json: String {
        let failures = failed.map {
            "{\"path\":\(JSONText.quote($0.path)),\"label\":\(JSONText.quote($0.label)),"
                + "\"reason\":\(JSONText.quote($0.reason))}"
        }
        return "{\"collection\":\(JSONText.quote(collection)),\"dry_run\":\(dryRun),\"imported\":\(imported),"
            + "\"skipped\":\(skipped),\"failed\":[\(failures.joined(separator: ","))]}"
    }
}

/// JSON string literals (RFC 8259): quotes, backslashes and control characters escaped.
enum JSONText {
    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

extension CollectionSettings {
    /// The login collection is locked when the class of its new items is
    /// (`secret_service_class` in arca.conf(5)).
    func isLocked(unlocked: LockClasses) -> Bool {
        switch accessible {
        case .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly: !unlocked.contains(.afterFirstUnlock)
        case .whenUnlocked, .whenUnlockedThisDeviceOnly, .whenPasscodeSetThisDeviceOnly:
            !unlocked.contains(.whenUnlocked)
        }
    }
}
