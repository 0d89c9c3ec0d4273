extension ItemCodec {
    /// Whether an opened attribute record (`encode`'s output) has `group` as its
    /// access group and holds every pair of `required` in its Secret Service
    /// dictionary, compared byte for byte in place: a search confirms each candidate
    /// of the blind index this way, without decoding the whole record.
    static func recordMatches(_ record: [UInt8], group: [UInt8], required: [(name: [UInt8], value: [UInt8])])
        -> Bool
    {
        var groupMatches = false
        var dictionary: Range<Int>?
        let complete = forEachField(record) { tag, range in
            switch Field(rawValue: tag) {
            case .accessGroup: groupMatches = record[range].elementsEqual(group)
            case .secretAttributes: dictionary = range
            default: break
            }
        }
        guard complete, groupMatches, let dictionary else { return false }
        // Names are unique in the record and in `required`: each required pair matches once at most.
        var matched = 0
        var j = dictionary.lowerBound
        func next() -> Range<Int>? {
            guard j + 4 <= dictionary.upperBound else { return nil }
            let length = Int(readUInt32(record, at: j))
            j += 4
            guard length <= dictionary.upperBound - j else { return nil }
            defer { j += length }
            return j..<(j + length)
        }
        while j < dictionary.upperBound {
            guard let name = next(), let value = next() else { return false }
            for pair in required where record[name].elementsEqual(pair.name) {
                if record[value].elementsEqual(pair.value) { matched += 1 }
            }
        }
        return matched == required.count
    }
}
