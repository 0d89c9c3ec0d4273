#include <security/pam_appl.h>
#include <security/pam_modules.h>
#include <security/pam_ext.h>

/* pam_syslog with a fixed "%s" format, callable from Swift without a C variadic
 * call: Swift's withVaList casts each argument to a protocol at run time, and the
 * first such cast in a fresh login process scans every protocol conformance of
 * the module (about 0.15 ms of a login, measured by bench/pam). The "%s" keeps a
 * '%' in a user name from being read as a format. */
static inline void arca_pam_syslog_text(const pam_handle_t *pamh, int priority, const char *text) {
    pam_syslog(pamh, priority, "%s", text);
}
