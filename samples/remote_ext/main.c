/* main.c — samples/remote_ext: extension ops on a remote: device.  One
 * program, both ends:
 *
 *   remote_ext --serve --listen tcp://0.0.0.0:7070 --device flex
 *       the server: bext-server's command line (bext_server_main), in a program
 *       linked with remote_ext.bext, so it runs RemoteActs and RemoteRows;
 *   remote_ext remote:tcp://HOST:7070
 *       the client, against that server;
 *   remote_ext
 *       both: starts `remote_ext --serve` hosting flex, then flex+fusion,
 *       on a Unix socket, and runs the client against each (ctest, `make
 *       demo`).
 *
 * The client checks every remote value against the same calls on its own
 * flex device and against libm. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/sample.h"
#include "remote_ext.h"
#include <bext/server.h>

extern char **environ;

enum { R = 2, C = 4, N = R * C };
static const float in[N] = { -3, -1, 0, 2, 0.5f, 1.5f, -0.25f, 4 };

static void show(const char *label, const float *v, int n) {
  printf("%s: [", label);
  for (int i = 0; i < n; i++) printf("%s%.4f", i ? ", " : "", (double)v[i]);
  printf("]\n");
}

/* softplus(x, 2), then row_max and row_stats of it when the server runs
 * them, on d; the values into sp[N], mx[R] and st[2 * R + 1] (the
 * maxima, the means, the row count). */
static void compute(const char *spec, float *sp, float *mx, float *st, bool rows) {
  bext_tensor *x = sample_tensor(in, (const int64_t[]){ R, C }, 2, spec);
  bext_tensor *y = remote_acts_softplus(x, 2.0f);
  if (!y) sample_die("remote_acts_softplus");
  if (!bext_read(y, sp, N * sizeof *sp)) sample_die("bext_read");
  if (rows) {
    bext_tensor *m = remote_rows_row_max(bext_retain(y));
    if (!m) sample_die("remote_rows_row_max");
    if (!bext_read(m, mx, R * sizeof *mx)) sample_die("bext_read");
    bext_release(m);
    RowStats s;
    if (!remote_rows_row_stats(y, &s)) sample_die("remote_rows_row_stats");
    if (!bext_read(s.max, st, R * sizeof *st) || !bext_read(s.mean, st + R, R * sizeof *st)) sample_die("bext_read");
    st[2 * R] = (float)s.rows;
    row_stats_release(&s);
  }
  bext_release(y);
}

static void client(const char *spec, bool rows) {
  float want_sp[N], want_mx[R], sp[N], mx[R], st[2 * R + 1];
  for (int i = 0; i < N; i++) want_sp[i] = (float)(log1p(exp(2.0 * in[i])) / 2.0);
  for (int r = 0; r < R; r++) {
    want_mx[r] = want_sp[r * C];
    for (int c = 1; c < C; c++) want_mx[r] = fmaxf(want_mx[r], want_sp[r * C + c]);
  }
  float local_sp[N], local_mx[R], local_st[2 * R + 1];
  compute("flex", local_sp, local_mx, local_st, true);
  sample_expect("row_stats on flex: the maxima", local_st, want_mx, R, 1e-5);
  sample_expect("softplus on flex", local_sp, want_sp, N, 1e-5);
  compute(spec, sp, mx, st, rows);
  show("softplus (streamed, run on the server)", sp, N);
  sample_expect("softplus: remote against local", sp, local_sp, N, 0);
  if (rows) {
    show("row_max (waited for its shape)", mx, R);
    sample_expect("row_max: remote against local", mx, local_mx, R, 0);
    show("row_stats (a struct, waited for: max, mean, rows)", st, 2 * R + 1);
    sample_expect("row_stats: remote against local", st, local_st, 2 * R + 1, 0);
  }
  const bext_device *d = bext_device_get(spec);
  if (d && !bext_sync(d)) sample_die("bext_sync");
  if (d) bext_device_close(d);
}

/* `remote_ext --serve --listen ipc://DIR/s --device DEV --quiet`, ready
 * when it prints its "listening" line. */
static pid_t serve(const char *dir, const char *device, char *spec, size_t n) {
  char addr[128];
  snprintf(addr, sizeof addr, "ipc://%s/s", dir);
  snprintf(spec, n, "remote:%s", addr);
  char *argv[] = { "remote_ext", "--serve", "--listen", addr, "--device", (char *)device, "--quiet", NULL };
  int out[2];
  if (pipe(out)) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  pid_t pid;
  int rv = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  char line[512];
  size_t len = 0;
  bool ready = false;
  for (int waited = 0; !rv && !ready && waited < 10000; waited += 100) {
    struct pollfd p = { .fd = out[0], .events = POLLIN };
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t k = read(out[0], line + len, sizeof line - 1 - len);
    if (k <= 0) break;
    len += (size_t)k;
    line[len] = 0;
    ready = strstr(line, "listening on") != NULL;
  }
  close(out[0]);
  if (rv || !ready) {
    fprintf(stderr, "remote_ext: the server did not start (%s)\n", rv ? strerror(rv) : "no ready line");
    if (!rv) kill(pid, SIGKILL), waitpid(pid, NULL, 0);
    return -1;
  }
  return pid;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--serve")) {
    argv[1] = argv[0];
    return bext_server_main(argc - 1, argv + 1);
  }
  if (argc > 1) {   /* a server someone started */
    client(argv[1], true);
    return 0;
  }
  static const char *const hosted[] = { "flex", "flex+fusion" };
  for (int h = 0; h < 2; h++) {
    char dir[] = "/tmp/bext-sample-XXXXXX", spec[200], sock[64];
    if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
    pid_t pid = serve(dir, hosted[h], spec, sizeof spec);
    if (pid < 0) return 1;
    printf("== a server hosting %s\n", hosted[h]);
    /* RemoteRows does not list Fusion: flex+fusion has no arm for it */
    client(spec, h == 0);
    kill(pid, SIGTERM);
    int st = 0;
    waitpid(pid, &st, 0);
    snprintf(sock, sizeof sock, "%s/s", dir);
    unlink(sock);
    rmdir(dir);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return fprintf(stderr, "remote_ext: the server did not exit cleanly\n"), 1;
  }
  return 0;
}
