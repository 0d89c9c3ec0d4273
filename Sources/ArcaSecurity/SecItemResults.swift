import ArcaProtocol

/// Reply items → the objects `SecItemCopyMatching` returns on Apple platforms.
package enum SecItemResults {
    /// The result object for `items` under `flags` and `limit` (`nil` when no
    /// `kSecReturn…` key was set).
    package static func object(_ items: [ResultItem], flags: ReturnFlags, limit: MatchLimit) -> CFTypeRef? {
        guard !flags.isEmpty else { return nil }
        let objects = items.map { one($0, flags: flags) }
        if limit == .one { return objects.first }
        return NSArray(array: objects)
    }

    /// One item: bare `NSData` for data alone or a persistent reference alone,
    /// else an attribute dictionary.
    package static func one(_ item: ResultItem, flags: ReturnFlags) -> AnyObject {
        if flags == .data { return NSData(bytes: item.data ?? [], length: item.data?.count ?? 0) }
        if flags == .persistentRef {
            return NSData(bytes: item.persistentRef ?? [], length: item.persistentRef?.count ?? 0)
        }
        let dictionary = attributes(item.attributes)
        if flags.contains(.data), let data = item.data {
            dictionary.setObject(NSData(bytes: data, length: data.count), forKey: kSecValueData)
        }
        if flags.contains(.persistentRef), let ref = item.persistentRef {
            dictionary.setObject(NSData(bytes: ref, length: ref.count), forKey: kSecValuePersistentRef)
        }
        return dictionary
    }

    /// Wire attributes → `[kSecAttr…: value]` with Foundation values, as Apple returns them.
    package static func attributes(_ map: AttributeMap) -> NSMutableDictionary {
        let dictionary = NSMutableDictionary()
        for (tag, value) in map {
            let object: AnyObject
            switch value {
            case .string(let s): object = NSString(string: s)
            case .bytes(let b): object = NSData(bytes: b, length: b.count)
            case .uint32(let n): object = NSNumber(value: n)
            case .bool(let b): object = NSNumber(value: b)
            case .date(let us): object = NSDate(timeIntervalSince1970: Double(us) / 1e6)
            case .itemClass(let c):
                object = c == .genericPassword ? kSecClassGenericPassword : kSecClassInternetPassword
            case .accessibility(let a): object = NSString(string: SecItemQuery.accessibilityName(a))
            }
            let key = tag == .itemClass ? "class" : SecItemQuery.attributeNames[tag]
            if let key { dictionary.setObject(object, forKey: NSString(string: key)) }
        }
        return dictionary
    }
}
