#include <security/pam_modules.h>
#include "PAMShim.h"

/* Implemented in Swift (ArcaPAM/Entry.swift). The symbol is global inside the
 * shared object only: the version script makes it local. */
extern int arca_pam_entry(int kind, pam_handle_t *pamh, int flags, int argc, const char **argv);

/* Keep in step with PAMEntryKind in ArcaPAM/Entry.swift. */
enum { ARCA_AUTH, ARCA_SETCRED, ARCA_ACCT, ARCA_OPEN, ARCA_CLOSE, ARCA_CHAUTHTOK };

#define ARCA_ENTRY(name, kind)                                                         \
    PAM_EXTERN int name(pam_handle_t *pamh, int flags, int argc, const char **argv) { \
        return arca_pam_entry(kind, pamh, flags, argc, argv);                          \
    }

ARCA_ENTRY(pam_sm_authenticate, ARCA_AUTH)
ARCA_ENTRY(pam_sm_setcred, ARCA_SETCRED)
ARCA_ENTRY(pam_sm_acct_mgmt, ARCA_ACCT)
ARCA_ENTRY(pam_sm_open_session, ARCA_OPEN)
ARCA_ENTRY(pam_sm_close_session, ARCA_CLOSE)
ARCA_ENTRY(pam_sm_chauthtok, ARCA_CHAUTHTOK)
