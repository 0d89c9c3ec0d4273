import ArcaProtocol
import CPAM

/// The Swift core of pam_arca.so. Until the PAM issue lands, every entry point
/// returns PAM_IGNORE so that a stack that lists the module is never affected.
@_cdecl("arca_pam_entry")
public func arcaPAMEntry(_ kind: Int32, _ handle: OpaquePointer?, _ flags: Int32) -> Int32 {
    Int32(PAM_IGNORE)
}
