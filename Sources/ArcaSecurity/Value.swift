import Foundation

/// Reading the loosely typed values of a query dictionary: Swift values,
/// Foundation objects and optionals of either, as Apple-platform code puts them
/// in `[String: Any]`, `[String: AnyObject]` or `NSMutableDictionary`.
enum Value {
    /// The value inside any number of `Optional` layers; `nil` for a nil.
    static func unwrap(_ value: Any) -> Any? {
        guard let optional = value as? any OptionalBox else { return value }
        return optional.boxed.flatMap(unwrap)
    }

    static func string(_ value: Any) -> String? {
        guard let value = unwrap(value) else { return nil }
        if let s = value as? String { return s }
        if let s = value as? NSString { return s as String }
        if let s = value as? Substring { return String(s) }
        return nil
    }

    static func bytes(_ value: Any) -> [UInt8]? {
        guard let value = unwrap(value) else { return nil }
        if let d = value as? Data { return [UInt8](d) }
        if let d = value as? NSData { return [UInt8](d as Data) }
        if let b = value as? [UInt8] { return b }
        return nil
    }

    static func bool(_ value: Any) -> Bool? {
        guard let value = unwrap(value) else { return nil }
        if let b = value as? Bool { return b }
        if let n = value as? NSNumber { return n.boolValue }
        if let n = value as? any BinaryInteger { return Int(exactly: n).map { $0 != 0 } }
        return nil
    }

    static func integer(_ value: Any) -> Int? {
        guard let value = unwrap(value) else { return nil }
        if value is Bool { return nil }
        if let n = value as? any BinaryInteger { return Int(exactly: n) }
        if let n = value as? NSNumber { return Int(exactly: n.doubleValue) }
        return nil
    }

    /// Seconds since 1970.
    static func date(_ value: Any) -> Double? {
        guard let value = unwrap(value) else { return nil }
        if let d = value as? Date { return d.timeIntervalSince1970 }
        if let d = value as? NSDate { return d.timeIntervalSince1970 }
        return nil
    }
}

/// Lets `Value.unwrap` see through `Optional` stored in an `Any`.
protocol OptionalBox {
    var boxed: Any? { get }
}

extension Optional: OptionalBox {
    var boxed: Any? { self.map { $0 as Any } }
}
