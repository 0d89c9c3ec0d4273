import ArcaProtocol

/// Label, attributes and dates of login items seen unlocked, by path id, so that
/// property reads (libsecret reads every item's) cost no arcad round trip. Never
/// secrets. Bounded: past `limit` entries it starts over, so that neither a long
/// run of CreateItem nor a large search grows the process without end (10,000
/// items created in a row once held 6 MB here).
struct ItemCache {
    /// The most entries held.
    let limit: Int
    private var items: [String: AttributeItemInfo] = [:]
    /// Set when the cache started over since the last `takeStartedOver()`: the
    /// owner then trims the heap once idle.
    private var startedOver = false

    init(limit: Int) {
        self.limit = limit
    }

    /// The number of entries.
    var count: Int { items.count }

    /// The entry for `id`; setting one past the limit starts the cache over first.
    subscript(id: String) -> AttributeItemInfo? {
        get { items[id] }
        set {
            if newValue != nil, items[id] == nil, items.count >= limit { removeAll(startingOver: true) }
            items[id] = newValue
        }
    }

    /// Adds the items of one arcad reply, starting over first if they do not all fit,
    /// so that every one of them is held afterwards (up to `limit`).
    mutating func remember(_ list: [AttributeItemInfo]) {
        if items.count + list.count > limit { removeAll(startingOver: true) }
        for item in list.prefix(limit) { items[ReferenceText.encode(item.reference)] = item }
    }

    /// Drops every entry (a lock change, or events missed).
    mutating func removeAll() { removeAll(startingOver: false) }

    /// Whether the cache started over since the last call.
    mutating func takeStartedOver() -> Bool {
        defer { startedOver = false }
        return startedOver
    }

    private mutating func removeAll(startingOver: Bool) {
        items = [:]  // frees the table, unlike removeAll(keepingCapacity:)
        if startingOver { startedOver = true }
    }
}
