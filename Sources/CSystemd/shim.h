#include <systemd/sd-bus.h>
#include <systemd/sd-login.h>
/* pidfd_open (glibc 2.36): arcad binds each PAM session to the process that
   opened it. Here because ArcaDaemon already imports this system module. */
#include <sys/pidfd.h>
