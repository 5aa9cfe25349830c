/* bext/server.h — bext-server as a library call, for a server program of
 * your own: one that runs your extension's ops for remote clients.
 *
 *   #include <bext/server.h>
 *   int main(int argc, char **argv) { return bext_server_main(argc, argv); }
 *
 * linked with the extension's generated code and implementations
 * (bext_add_extension) and with bext::server (CMake; `bext_server` inside
 * the bext tree).  The generated code registers the extension's ops before
 * main; the server runs those a client calls by (trait, op id) on its
 * hosted device.  docs/remote.md "Extension ops". */
#ifndef BEXT_SERVER_H
#define BEXT_SERVER_H

#ifdef __cplusplus
extern "C" {
#endif

/* bext-server's whole command line (flags as `--help` lists them:
 * --listen, --device, --token-file, the limits, --quiet): starts the
 * server, prints its ready line ("bext-server: listening on ..."), logs
 * the extension ops it runs, serves until SIGINT or SIGTERM, and returns
 * the exit status (0 after a clean stop, 1 when it cannot start, 2 for a
 * bad flag). */
int bext_server_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif /* BEXT_SERVER_H */
