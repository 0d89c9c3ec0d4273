/*
 * CArcaStartup: what `arca` and pam_arca.so run before any Swift code, linked only
 * into those two (Package.swift). Nothing to call from Swift: the target exists for
 * its definitions, which replace the Swift runtime's own (see arguments.c).
 */
#ifndef ARCA_C_STARTUP_H
#define ARCA_C_STARTUP_H
#endif
