/* remote_ext_server.c — a server program that runs remote_ops.bext's ops:
 * bext-server's command line (bext_server_main), linked with the extension's
 * generated code and its implementations (tests/remote/CMakeLists.txt).
 * What docs/remote.md "Extension ops" tells users to write. */
#include <bext/server.h>

int main(int argc, char **argv) { return bext_server_main(argc, argv); }
