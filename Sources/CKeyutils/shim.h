/* libkeyutils, as Debian's libkeyutils-dev ships it. Arca's own C (the
 * user-keyring child) lives in the CArcaSystem target, built with _GNU_SOURCE. */
#include <keyutils.h>
