/* libgcrypt's variadic control calls (see include/CArcaGcrypt.h). */
#include "CArcaGcrypt.h"

#include <gcrypt.h>

int arca_gcry_initialize(void) {
    if (gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) return 0;
    if (!gcry_check_version(GCRYPT_VERSION)) return -1;
    gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    return 0;
}
