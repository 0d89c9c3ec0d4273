#include <gcrypt.h>

// gcry_control is variadic, which Swift cannot call: these wrap the two uses.

/// Initialises libgcrypt once per process (idempotent). Returns 0 when the
/// library is at least the version this was built with.
static inline int arca_gcry_initialize(void) {
    if (gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) return 0;
    if (!gcry_check_version(GCRYPT_VERSION)) return -1;
    // Arca keeps its own secrets in mlocked SecretBytes; libgcrypt's secure heap
    // is not needed for the public-key arithmetic here.
    gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    return 0;
}
