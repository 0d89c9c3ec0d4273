#ifndef ARCA_PAM_SHIM_H
#define ARCA_PAM_SHIM_H
/* The C face of pam_arca.so: only the pam_sm_* entry points are exported (see
 * pam/pam_arca.map); each forwards to the Swift core, ArcaPAM. */
#endif
