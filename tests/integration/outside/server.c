/* server.c — a bext server program of the outside project: bext-server's
 * command line (<bext/server.h>) linked with outside.bext, so it runs the
 * Outside ops for remote clients.  Built where bext has the Remote backend
 * (the package then has bext::server); outside_test.sh starts it and
 * checks it lists those ops. */
#include <bext/server.h>

int main(int argc, char **argv) { return bext_server_main(argc, argv); }
