import ArcaProtocol

/// `arca sync`: arcad makes and keeps the keys; the CLI shows the device id.
extension Context {
    mutating func syncInit(output: inout Output) throws(CLIError) {
        let reply: Reply
        do { reply = try send(.syncInit(uid: uid), what: "sync init") } catch {
            guard case .status(.duplicateItem, _, _) = error else { throw error }
            throw .status(
                .duplicateItem, what: "sync init", detail: "sync is already set up for this user on this machine")
        }
        guard case .syncDevice(let id) = reply else {
            throw .failure(what: "sync init", why: "unexpected reply from arcad")
        }
        let hex = id.map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }.joined()
        output.line("sync circle created on this machine; device id \(hex)")
    }
}
