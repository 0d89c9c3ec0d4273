import ArcaPAM
import CPAM
import Testing

/// The one mapping to libpam's numbers (pam_arca(8), RETURN VALUES).
@Suite struct PAMResultTests {
    @Test("success is PAM_SUCCESS (0), ignore is PAM_IGNORE (25)")
    func codes() {
        #expect(PAMResult.success.code == 0)
        #expect(PAMResult.ignore.code == 25)
        #expect(PAM_SUCCESS == 0 && PAM_IGNORE == 25)
    }
}
