/// The options given on one command line: a handful of keys, kept in an array in the
/// order given. Not a `Dictionary<OptionKey, String?>`: the first use of that generic
/// type makes the static runtime scan every protocol conformance in the binary, about
/// a tenth of the user time of `arca get`, for a map that never holds more than ten keys.
public struct OptionValues: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    private var entries: [(key: OptionKey, value: String?)] = []

    /// Options from a literal, as in `[.service: "mail", .json: nil]`.
    public init(dictionaryLiteral elements: (OptionKey, String?)...) {
        for (key, value) in elements { self[key] = .some(value) }
    }

    /// The option's value: nil if not given, `.some(nil)` for a flag or an
    /// optional-value option given alone. Setting nil removes the option.
    public subscript(key: OptionKey) -> String?? {
        get { entries.first { $0.key == key }.map { $0.value } }
        set {
            let index = entries.firstIndex { $0.key == key }
            switch (index, newValue) {
            case (let index?, let value?): entries[index].value = value
            case (let index?, nil): entries.remove(at: index)
            case (nil, let value?): entries.append((key, value))
            case (nil, nil): break
            }
        }
    }

    /// The options given, in the order given.
    public var keys: [OptionKey] { entries.map(\.key) }

    /// The same options with the same values, whatever their order.
    public static func == (a: OptionValues, b: OptionValues) -> Bool {
        a.entries.count == b.entries.count && a.entries.allSatisfy { b[$0.key] == .some($0.value) }
    }
}
