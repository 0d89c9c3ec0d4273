// Uses both products the way an application would, against the arcad that
// ARCA_SOCKET names. Prints one line per check; exits 1 if any fails.
//   arca-consumer locked       a user without a vault: locked, never "not found"
//   arca-consumer unavailable  no arcad at ARCA_SOCKET
import Arca
import ArcaSecurity
import Foundation

var failed = false
@MainActor func check(_ name: String, _ ok: Bool, _ detail: String) {
    print("\(ok ? "ok  " : "FAIL") \(name): \(detail)")
    if !ok { failed = true }
}

let mode = CommandLine.arguments.dropFirst().first ?? "locked"
let expected: OSStatus = mode == "unavailable" ? errSecNotAvailable : errSecInteractionNotAllowed

do {
    let value = try Keychain(service: "com.example.consumer").get("token")
    check("Keychain.get", false, "returned \(value ?? "nil") instead of throwing")
} catch {
    check("Keychain.get", error.status == expected, "threw \(error.code) (\(error.status))")
}

let query: [String: Any] = [
    kSecClass as String: kSecClassGenericPassword,
    kSecAttrService as String: "com.example.consumer",
    kSecAttrAccount as String: "token",
    kSecReturnData as String: kCFBooleanTrue!,
    kSecMatchLimit as String: kSecMatchLimitOne,
]
var result: AnyObject?
let status = SecItemCopyMatching(query as CFDictionary, &result)
check(
    "SecItemCopyMatching", status == expected && result == nil,
    "\(status) — \(SecCopyErrorMessageString(status, nil) as String? ?? "")")
exit(failed ? 1 : 0)
