/*
 * CArcaPAM: the libpam call Swift cannot make cheaply. pam_syslog is variadic:
 * Swift's withVaList casts each argument to a protocol at run time, and the first
 * such cast in a fresh login process scans every protocol conformance of the
 * module (about 0.15 ms of a login, measured by bench/pam). So the call is
 * compiled here (pam_log.c) rather than written as inline code in CPAM's module
 * header. Only ArcaPAM's Internals/LivePAMContext.swift imports this module.
 */
#ifndef ARCA_C_PAM_H
#define ARCA_C_PAM_H

struct pam_handle;

/* pam_syslog(pamh, priority, "%s", text): the "%s" keeps a '%' in a user name
 * from being read as a format. */
void arca_pam_syslog_text(const struct pam_handle *pamh, int priority, const char *text);

#endif
