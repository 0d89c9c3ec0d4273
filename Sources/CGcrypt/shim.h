#include <gcrypt.h>
