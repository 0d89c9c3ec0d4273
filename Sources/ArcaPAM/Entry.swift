import CPAM

/// The Swift side of every `pam_sm_*` function of pam_arca.so (the C shim
/// forwards here). Hidden from the module's exports by pam/pam_arca.map.
@_cdecl("arca_pam_entry")
public func arcaPAMEntry(
    _ kind: Int32, _ handle: OpaquePointer?, _ flags: Int32, _ argc: Int32,
    _ argv: UnsafePointer<UnsafePointer<CChar>?>?
) -> Int32 {
    guard let handle, let entry = PAMEntryKind(rawValue: kind) else { return PAMResult.ignore.code }
    let context = LivePAMContext(handle: handle)
    var options = ModuleOptions()
    if let argv {
        for index in 0..<Int(max(argc, 0)) {
            guard let raw = argv[index] else { continue }
            let argument = String(cString: raw)
            if !options.apply(argument) {
                context.log(.notice, "unknown or malformed argument ignored: \(argument)")
            }
        }
    }
    let transport = SocketTransport(path: options.socketPath, timeoutMilliseconds: options.timeoutMilliseconds)
    return PAMModule(context: context, options: options, transport: transport).run(entry, flags: flags).code
}
