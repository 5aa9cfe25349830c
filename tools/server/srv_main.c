/* srv_main.c — the bext-server program: the command line of the server
 * library (srv_cli.c).  It runs no extension ops (none are linked in); a
 * program of the same one line linked with an extension's generated code
 * runs that extension's (docs/remote.md "Extension ops"). */
#include <bext/server.h>

int main(int argc, char **argv) { return bext_server_main(argc, argv); }
