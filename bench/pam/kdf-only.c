/* bench/pam/kdf-only.c: the control module for bench/pam/run.sh's C-login rows (run.sh compiles
 * it with the toolchain's clang). It does nothing but one Argon2id (crypto_pwhash, 1 pass,
 * 64 MiB: the parameters of the benchmark vault pam_arca derives for) in pam_sm_authenticate,
 * and links libsodium as pam_arca.so does (a DT_NEEDED, loaded by pam_start). fresh-c catches
 * that call like pam_arca.so's and takes its time out of the step, so this module's "added,
 * KDF excluded" is what loading libsodium plus the KDF's after-effects (a cold cache, a CPU
 * clocked down or handed to another process, 64 MiB of page faults returned) cost the rest of
 * the login: the part of pam_arca's headline that is not pam_arca's own work.
 * Not a real module: it reads no configuration and decides nothing (PAM_IGNORE everywhere). */
#include <security/pam_appl.h>
#include <security/pam_modules.h>
#include <sodium.h>
#include <string.h>

PAM_EXTERN int pam_sm_authenticate(pam_handle_t *handle, int flags, int argc, const char **argv) {
    (void)flags, (void)argc, (void)argv;
    const void *item = NULL;
    const char *password = "bench-pw";
    if (pam_get_item(handle, PAM_AUTHTOK, &item) == PAM_SUCCESS && item != NULL) password = item;
    unsigned char key[32], salt[crypto_pwhash_SALTBYTES] = {0};
    if (sodium_init() < 0) return PAM_IGNORE;
    int derived = crypto_pwhash(key, sizeof key, password, strlen(password), salt, 1, (size_t)64 << 20,
                                crypto_pwhash_ALG_ARGON2ID13);
    sodium_memzero(key, sizeof key);
    return derived == 0 ? PAM_IGNORE : PAM_AUTH_ERR;
}

PAM_EXTERN int pam_sm_setcred(pam_handle_t *handle, int flags, int argc, const char **argv) {
    (void)handle, (void)flags, (void)argc, (void)argv;
    return PAM_IGNORE;
}

PAM_EXTERN int pam_sm_open_session(pam_handle_t *handle, int flags, int argc, const char **argv) {
    (void)handle, (void)flags, (void)argc, (void)argv;
    return PAM_IGNORE;
}

PAM_EXTERN int pam_sm_close_session(pam_handle_t *handle, int flags, int argc, const char **argv) {
    (void)handle, (void)flags, (void)argc, (void)argv;
    return PAM_IGNORE;
}
