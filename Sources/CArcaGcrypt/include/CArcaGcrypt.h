/*
 * CArcaGcrypt: the libgcrypt calls Swift cannot make. gcry_control is variadic,
 * which Swift cannot call, so its uses are compiled here (gcrypt.c) rather than
 * written as inline code in CGcrypt's module header. Only ArcaSecretService's
 * Internals/Gcrypt.swift imports this module.
 */
#ifndef ARCA_C_GCRYPT_H
#define ARCA_C_GCRYPT_H

/* Initialises libgcrypt once per process (idempotent): checks that the library
 * is at least the version this was built with and disables its secure heap (Arca
 * keeps its own secrets in mlocked SecretBytes; the public-key arithmetic here
 * does not need it). Returns 0, or -1 when the library is older than the headers. */
int arca_gcry_initialize(void);

#endif
