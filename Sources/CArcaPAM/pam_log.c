/* pam_syslog with a fixed format, for Swift (see include/CArcaPAM.h). */
#include "CArcaPAM.h"

#include <security/pam_ext.h>

void arca_pam_syslog_text(const struct pam_handle *pamh, int priority, const char *text) {
    pam_syslog(pamh, priority, "%s", text);
}
