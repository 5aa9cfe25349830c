/* remote_seeds.c — writes the seed corpus of fuzz_remote (corpus-remote/):
 * small client streams (what follows the Hello) built with the protocol's
 * own codecs.  Rebuild and rerun by hand when the protocol changes:
 *   cc tests/fuzz/remote_seeds.c -Ibackends/remote -Iruntime/src -Iruntime/include \
 *      -Ibuild/include -Ibuild/runtime/gen -Ibuild/gen/remote -Lbuild/lib \
 *      -lbext -lbext_kir -lnng -lprotobuf-c -lopenblas -lcjson -lmvec -lm -ldl -pthread
 *   ./a.out tests/fuzz/corpus-remote */
#include <stdio.h>

#include "rm_wire.h"

static struct bxrm_buf b;

static void req(Bxrm__Request *q, const void *raw, size_t n) {
  bxrm_buf_frame(&b, &q->base, n);
  for (size_t i = 0; i < n; i++) {
    if (b.len == b.cap) return;
    b.p[b.len++] = ((const uint8_t *)raw)[i];
  }
}
static void upload(uint64_t id, uint32_t dt, int64_t n, const void *v, size_t bytes) {
  Bxrm__Upload u = BXRM__UPLOAD__INIT;
  u.id = id, u.dtype = dt, u.n_shape = 1, u.shape = &n;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_UPLOAD, q.upload = &u;
  req(&q, v, bytes);
}
static void op(uint32_t code, uint64_t *in, size_t nin, uint64_t out, Bxrm__Attrs *at, uint64_t *sc, size_t nsc) {
  Bxrm__Op m = BXRM__OP__INIT;
  m.code = code, m.api = "bext_x", m.in = in, m.n_in = nin, m.out = out, m.at = at, m.sc = sc, m.n_sc = nsc;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_OP, q.op = &m;
  req(&q, NULL, 0);
}
static void simple(int which, uint64_t id) {
  Bxrm__Read rd = BXRM__READ__INIT;
  Bxrm__Release rl = BXRM__RELEASE__INIT;
  Bxrm__Sync sy = BXRM__SYNC__INIT;
  Bxrm__Stats st = BXRM__STATS__INIT;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  if (which == 0) rd.id = id, q.body_case = BXRM__REQUEST__BODY_READ, q.read = &rd;
  if (which == 1) rl.ids = &id, rl.n_ids = 1, q.body_case = BXRM__REQUEST__BODY_RELEASE, q.release = &rl;
  if (which == 2) q.body_case = BXRM__REQUEST__BODY_SYNC, q.sync = &sy;
  if (which == 3) q.body_case = BXRM__REQUEST__BODY_STATS, q.stats = &st;
  req(&q, NULL, 0);
}
/* An ExtFind, then an ExtCall of (trait, id) on `in` (fuzz_remote links
 * tests/remote/remote_ops.bext: RemoteOps::affine streams,
 * RemoteShapes::row_sums waits). */
static void ext(const char *trait, const char *id, uint64_t in, uint64_t out, bool wait) {
  Bxrm__ExtFind f = BXRM__EXT_FIND__INIT;
  f.trait = (char *)trait, f.id = (char *)id;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_EXT_FIND, q.ext_find = &f;
  req(&q, NULL, 0);
  static uint8_t args[9] = {1, 0, 0, 0, 0x40, 0, 0, 0x80, 0x3f};   /* version 1, 2.0f, 1.0f */
  int64_t shape[2] = {2, 3};
  Bxrm__ExtCall x = BXRM__EXT_CALL__INIT;
  x.trait = (char *)trait, x.id = (char *)id;
  x.in = &in, x.n_in = 1, x.out = out, x.wait = wait;
  x.args.data = args, x.args.len = sizeof args;
  if (!wait) x.dtype = BEXT_F32, x.shape = shape, x.n_shape = 2;
  Bxrm__Request c = BXRM__REQUEST__INIT;
  c.body_case = BXRM__REQUEST__BODY_EXT_CALL, c.ext_call = &x;
  req(&c, NULL, 0);
}
/* An ExtFind, then a waiting ExtCall of a method returning a value: its
 * tensors take ids from `out` on, n_out reserved (fuzz_remote links
 * tests/remote/remote_ops.bext: RemoteValues runs). */
static void ext_value(const char *id, const uint8_t *args, size_t nargs, uint64_t in, uint64_t out, uint32_t n_out) {
  Bxrm__ExtFind f = BXRM__EXT_FIND__INIT;
  f.trait = "RemoteValues", f.id = (char *)id;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_EXT_FIND, q.ext_find = &f;
  req(&q, NULL, 0);
  Bxrm__ExtCall x = BXRM__EXT_CALL__INIT;
  x.trait = "RemoteValues", x.id = (char *)id;
  x.in = &in, x.n_in = 1, x.out = out, x.n_out = n_out, x.wait = true;
  x.args.data = (uint8_t *)args, x.args.len = nargs;
  Bxrm__Request c = BXRM__REQUEST__INIT;
  c.body_case = BXRM__REQUEST__BODY_EXT_CALL, c.ext_call = &x;
  req(&c, NULL, 0);
}
/* A streamed value call of RemoteOps::scaled (its metadata gives the
 * value): the value the client expects and its tensor's spec. */
static void ext_scaled(uint64_t in, uint64_t out, int64_t n) {
  static const uint8_t args[5] = {1, 0, 0, 0, 0x40};                          /* version 1, a = 2.0f */
  static const uint8_t value[13] = {1, 0, 0, 0, 0x40, 1, 0, 0, 0, 0, 0, 0, 0};   /* factor 2.0f, rank 1 */
  Bxrm__ExtFind f = BXRM__EXT_FIND__INIT;
  f.trait = "RemoteOps", f.id = "scaled";
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_EXT_FIND, q.ext_find = &f;
  req(&q, NULL, 0);
  Bxrm__TensorOut o = BXRM__TENSOR_OUT__INIT, *op = &o;
  o.dtype = BEXT_F32, o.n_shape = 1, o.shape = &n;
  Bxrm__ExtCall x = BXRM__EXT_CALL__INIT;
  x.trait = "RemoteOps", x.id = "scaled";
  x.in = &in, x.n_in = 1, x.out = out, x.n_out = 1, x.n_outs = 1, x.outs = &op;
  x.args.data = (uint8_t *)args, x.args.len = sizeof args;
  x.value.data = (uint8_t *)value, x.value.len = sizeof value;
  Bxrm__Request c = BXRM__REQUEST__INIT;
  c.body_case = BXRM__REQUEST__BODY_EXT_CALL, c.ext_call = &x;
  req(&c, NULL, 0);
}
static void save(const char *dir, const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (f) fwrite(b.p, 1, b.len, f), fclose(f);
  b.len = 0;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  float v[6] = {1, 2, 3, 4, 5, 6};
  int64_t idx[2] = {0, 2};
  upload(1, BEXT_F32, 6, v, sizeof v);
  op(BXR_OP_ADD, (uint64_t[]){1, 1}, 2, 2, NULL, NULL, 0);
  op(BXR_OP_EXP, (uint64_t[]){2}, 1, 3, NULL, NULL, 0);
  simple(0, 3), simple(1, 2), simple(2, 0), simple(3, 0);
  save(argv[1], "chain");
  Bxrm__Attrs sh = BXRM__ATTRS__INIT;
  int64_t s23[2] = {2, 3};
  sh.shape = s23, sh.n_shape = 2;
  upload(1, BEXT_F32, 6, v, sizeof v);
  op(BXR_OP_RESHAPE, (uint64_t[]){1}, 1, 2, &sh, NULL, 0);
  Bxrm__Attrs red = BXRM__ATTRS__INIT;
  red.dim = 1, red.keepdim = 1;
  op(BXR_OP_SUM, (uint64_t[]){2}, 1, 3, &red, NULL, 0);
  upload(4, BEXT_I64, 2, idx, sizeof idx);
  Bxrm__Attrs g = BXRM__ATTRS__INIT;
  op(BXR_OP_GATHER, (uint64_t[]){1, 4}, 2, 5, &g, NULL, 0);
  simple(0, 5), simple(0, 3), simple(2, 0);
  save(argv[1], "reduce-gather");
  Bxrm__Attrs cr = BXRM__ATTRS__INIT;
  cr.shape = s23, cr.n_shape = 2, cr.dtype = BEXT_F64;
  double two = 2.0;
  uint64_t bits;
  __builtin_memcpy(&bits, &two, 8);
  op(BXR_OP_FULL, NULL, 0, 1, &cr, &bits, 1);
  op(BXR_OP_MUL_SCALAR, (uint64_t[]){1}, 1, 2, NULL, &bits, 1);
  op(BXR_OP_MATMUL, (uint64_t[]){1, 2}, 2, 3, NULL, NULL, 0);
  op(BXR_OP_CAT, (uint64_t[]){1, 2, 1, 2}, 4, 4, &g, NULL, 0);
  simple(0, 4), simple(1, 1), simple(3, 0);
  save(argv[1], "create-matmul-cat");
  upload(1, BEXT_F32, 6, v, sizeof v);
  ext("RemoteOps", "affine", 1, 2, false);
  ext("RemoteShapes", "row_sums", 2, 3, true);
  simple(0, 2), simple(2, 0);
  save(argv[1], "ext-call");
  upload(1, BEXT_F32, 6, v, sizeof v);
  static const uint8_t halves[2] = {1, 2};                            /* version 1, parts = 2: Halves */
  static const uint8_t half[9] = {1, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f};   /* version 1, scale = 0.5 */
  ext_value("split", halves, sizeof halves, 1, 2, 64);
  ext_value("summary", half, sizeof half, 1, 66, 64);
  simple(0, 3), simple(0, 66), simple(1, 2), simple(2, 0);
  save(argv[1], "ext-value");
  upload(1, BEXT_F32, 6, v, sizeof v);
  ext_scaled(1, 2, 6);
  ext_scaled(1, 3, 5);   /* a spec the implementation does not give */
  simple(0, 2), simple(0, 3), simple(2, 0);
  save(argv[1], "ext-value-streamed");
  return 0;
}
