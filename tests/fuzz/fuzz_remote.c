/* fuzz_remote.c — libFuzzer target for bext-server's session decoder
 * (tools/server/srv_session.c, compiled into the target with coverage):
 * the input is the byte stream a client sends after a valid Hello (the
 * target sends that itself, so the fuzzer starts past the handshake),
 * served by one session on flex with small limits, replies discarded;
 * the target links tests/remote/remote_ops.bext, so extension calls run.
 * Every frame must be judged without a crash, a leak, a sanitizer report
 * or a hang; the session's tensors are freed when it ends. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

struct mem {
  const uint8_t *p;
  size_t n, off;
};

static int mem_read(void *ctx, void *buf, size_t n, bool started) {
  (void)started;
  struct mem *m = ctx;
  if (n > m->n - m->off) return NNG_ECLOSED;   /* the end of input is a closed connection */
  if (n) memcpy(buf, m->p + m->off, n);   /* buf may be NULL for an empty tensor */
  m->off += n;
  return 0;
}
static int mem_write(void *ctx, const void *buf, size_t n) {
  (void)ctx, (void)buf, (void)n;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static struct bxsv_config cfg;
  static struct bext_device *dev;
  static struct bxrm_buf hello;
  if (!dev) {
    bxsv_config_defaults(&cfg);
    cfg.max_frame = 1 << 16;
    cfg.max_tensors = 256;
    cfg.max_bytes = 1 << 20;
    dev = (struct bext_device *)bext_device_get("flex");
    Bxrm__Hello h = BXRM__HELLO__INIT;
    h.version = BXRM_PROTOCOL_VERSION;
    Bxrm__Request q = BXRM__REQUEST__INIT;
    q.body_case = BXRM__REQUEST__BODY_HELLO;
    q.hello = &h;
    if (!dev || !bxrm_buf_frame(&hello, &q.base, 0)) abort();
  }
  uint8_t *all = malloc(hello.len + size + 1);
  memcpy(all, hello.p, hello.len);
  if (size) memcpy(all + hello.len, data, size);
  struct mem m = {all, hello.len + size, 0};
  struct bxsv_session *s = bxsv_session_new(&cfg, dev, NULL, 1, (struct bxsv_port){&m, mem_read, mem_write});
  bxsv_session_run(s);
  bxsv_session_free(s);
  free(all);
  return 0;
}
