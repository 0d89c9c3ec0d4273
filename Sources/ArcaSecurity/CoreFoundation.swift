@_exported import Arca
@_exported import Foundation

// swift-corelibs-foundation has none of CoreFoundation's Swift-visible types,
// so the shapes Apple-platform Keychain code uses are given here as aliases of
// the Foundation classes they are toll-free bridged to on Apple platforms.
// `query as CFDictionary` then type-checks for `[String: Any]`, `[String:
// AnyObject]`, `NSDictionary` and `NSMutableDictionary`, and a result read into
// `AnyObject?` casts with `as? Data`, `as? NSData` and `as! NSData?`.

/// `CFTypeRef`: any object, as on Apple platforms (`AnyObject`).
public typealias CFTypeRef = AnyObject
/// `CFString`: the Keychain's constant keys and values (`kSecClass`…); `as String` works.
public typealias CFString = NSString
/// `CFDictionary`: query and attribute dictionaries.
public typealias CFDictionary = NSDictionary
/// `CFMutableDictionary`.
public typealias CFMutableDictionary = NSMutableDictionary
/// `CFArray`: the result of a query with `kSecMatchLimitAll`.
public typealias CFArray = NSArray
/// `CFData`: a returned secret or persistent reference.
public typealias CFData = NSData
/// `CFNumber`.
public typealias CFNumber = NSNumber
/// `CFBoolean`: the type of ``kCFBooleanTrue`` and ``kCFBooleanFalse``.
public typealias CFBoolean = NSNumber
/// `CFDate`.
public typealias CFDate = NSDate

/// The boolean true of CoreFoundation, as used in Keychain queries
/// (`kSecReturnData as String: kCFBooleanTrue!`).
public let kCFBooleanTrue: CFBoolean! = NSNumber(value: true)
/// The boolean false of CoreFoundation.
public let kCFBooleanFalse: CFBoolean! = NSNumber(value: false)

extension NSMutableDictionary {
    /// Sets (or, with `nil`, removes) the value for a string key, as key-value
    /// coding does on Apple platforms (`query.setValue(kSecClassGenericPassword, forKey: kSecClass as String)`).
    /// swift-corelibs-foundation has no key-value coding.
    public func setValue(_ value: Any?, forKey key: String) {
        if let value {
            setObject(value, forKey: NSString(string: key))
        } else {
            removeObject(forKey: NSString(string: key))
        }
    }
}
