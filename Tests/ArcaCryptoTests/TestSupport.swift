import ArcaCrypto
import Foundation

/// Hex helpers and resource loading for the known-answer tests.
enum Hex {
    static func decode(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var chars = hex.makeIterator()
        while let hi = chars.next(), let lo = chars.next() {
            guard let byte = UInt8(String([hi, lo]), radix: 16) else { return [] }
            out.append(byte)
        }
        return out
    }

    static func encode(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}

enum Resources {
    static func json(_ name: String) throws -> [String: Any] {
        guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Resources") else {
            throw CocoaError(.fileNoSuchFile)
        }
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
        return object as? [String: Any] ?? [:]
    }

    static func vectors(_ name: String, _ key: String = "vectors") throws -> [[String: Any]] {
        try json(name)[key] as? [[String: Any]] ?? []
    }
}

extension SecretBytes {
    /// Test-only: copies the secret out so that a test can compare it.
    var bytesForTesting: [UInt8] { withUnsafeBytes { Array($0) } }

    static func testing(_ bytes: [UInt8]) throws -> SecretBytes {
        try bytes.withUnsafeBytes { try SecretBytes(copying: $0) }
    }
}
