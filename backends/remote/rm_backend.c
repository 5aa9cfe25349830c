/* rm_backend.c — the Remote backend (`remote:tcp://HOST:PORT`,
 * `remote:ipc:///path`): tensors live on a bext-server (tools/server),
 * this process holds handles whose opaque storage is the server-side id.
 *
 * Every core op goes through the one generic exec below: dispatch has
 * already run the op's inference rule here, so the output handle is made
 * at once from op->out with a fresh id, and the op is queued as a frame
 * without waiting (rm_client.c batches the frames).  The server runs the
 * same op through its hosted device's dispatch; extension calls go by id
 * (rm_ext.c).  Only `read`, `sync`, the device's first use and some
 * extension calls wait for the server; a failure of deferred work
 * (an index out of range, the server's limits) comes back at the read of
 * the value it made, or at the next sync, naming the op.  docs/remote.md. */
#include <stdlib.h>
#include <string.h>

#include "rm_client.h"

static struct bxrm_conn *conn_of(struct bext_device *dev) { return dev->ctx; }

static bool rm_open(struct bext_device *dev) {
  struct bxrm_conn *c = bxrm_conn_open(dev->address);
  if (!c) return false;
  dev->ctx = c;
  return true;
}

static void rm_close(struct bext_device *dev) {
  struct bxrm_conn *c = conn_of(dev);
  if (!c) return;
  bxrm_conn_shutdown(c);
  dev->ctx = NULL;
  bxrm_conn_unref(c);   /* live handles keep it until they die */
}

/* The op as a frame: what its row reads (bext/ops.h), nothing else. */
static bext_tensor *rm_exec(struct bxr_op *op) {
  struct bext_device *dev = op->device;
  struct bxrm_conn *c = conn_of(dev);
  const struct bxr_op_info *row = &bxr_op_info[op->code];
  uint64_t ins_buf[BXR_MAX_INPUTS], *ins = ins_buf;
  if (op->n_in > BXRM_MAX_OP_INPUTS)
    return bxr_op_error(op, "%d inputs: a remote op takes at most %d", op->n_in, BXRM_MAX_OP_INPUTS), NULL;
  if (op->n_in > BXR_MAX_INPUTS && !(ins = malloc((size_t)op->n_in * sizeof *ins)))
    return bxr_op_error(op, "out of memory"), NULL;
  for (int i = 0; i < op->n_in; i++) ins[i] = bxrm_id_of(op->in[i]);

  Bxrm__Attrs at = BXRM__ATTRS__INIT;
  int32_t dims[BEXT_MAX_RANK];
  const bext_attrs *a = &op->at;
  if (row->attrs & BXR_A_SHAPE) at.n_shape = (size_t)a->rank, at.shape = (int64_t *)a->shape;
  if (row->attrs & BXR_A_DIMS) {
    for (int i = 0; i < a->ndims; i++) dims[i] = a->dims[i];
    at.n_dims = (size_t)a->ndims, at.dims = dims;
  }
  if (row->attrs & BXR_A_DIM) at.dim = a->dim;
  if (row->attrs & BXR_A_KEEPDIM) at.keepdim = a->keepdim, at.all = a->all;
  if (row->attrs & BXR_A_RANGES) {
    at.n_start = at.n_end = (size_t)a->nranges;
    at.start = (int64_t *)a->start;
    at.end = (int64_t *)a->end;
  }
  if (row->attrs & BXR_A_DTYPE) at.dtype = (uint32_t)a->dtype;
  if (row->attrs & BXR_A_SEED) at.seed = a->seed;
  uint64_t sc[3];
  for (int i = 0; i < row->nscalar; i++) memcpy(&sc[i], &op->sc[i], sizeof sc[i]);

  Bxrm__Op m = BXRM__OP__INIT;
  m.code = (uint32_t)op->code;
  m.api = (char *)op->api;
  m.n_in = (size_t)op->n_in;
  m.in = ins;
  m.n_sc = (size_t)row->nscalar;
  m.sc = sc;
  m.at = &at;
  Bxrm__Request req = BXRM__REQUEST__INIT;
  req.body_case = BXRM__REQUEST__BODY_OP;
  req.op = &m;

  pthread_mutex_lock(&c->mu);
  m.out = bxrm_conn_new_id(c);
  bool ok = bxrm_conn_send(c, op->api, &req, NULL, 0, true);
  pthread_mutex_unlock(&c->mu);
  if (ins != ins_buf) free(ins);
  if (!ok) return NULL;
  return bxrm_handle_new(dev, c, m.out, op->out.dtype, op->out.rank, op->out.shape);
}

static bext_tensor *rm_from_data(struct bext_device *dev, bext_dtype dt, int rank, const int64_t *shape,
                                 const void *src) {
  struct bxrm_conn *c = conn_of(dev);
  size_t bytes = bxr_nbytes(dt, rank, shape);
  if (bytes == SIZE_MAX) return bxr_error("bext_from_data: tensor too large"), NULL;
  if (c->max_frame && bytes > c->max_frame)
    return bxr_error("bext_from_data: %zu bytes exceed the server's frame limit of %llu bytes (remote:%s)", bytes,
                     (unsigned long long)c->max_frame, c->address),
           NULL;
  Bxrm__Upload up = BXRM__UPLOAD__INIT;
  up.dtype = (uint32_t)dt;
  up.n_shape = (size_t)rank;
  up.shape = (int64_t *)shape;
  Bxrm__Request req = BXRM__REQUEST__INIT;
  req.body_case = BXRM__REQUEST__BODY_UPLOAD;
  req.upload = &up;
  pthread_mutex_lock(&c->mu);
  up.id = bxrm_conn_new_id(c);
  bool ok = bxrm_conn_send(c, "bext_from_data", &req, src, bytes, true);
  pthread_mutex_unlock(&c->mu);
  return ok ? bxrm_handle_new(dev, c, up.id, dt, rank, shape) : NULL;
}

/* Where a Data reply's bytes go: the caller's buffer, when the spec the
 * server sends is the handle's. */
struct read_ctx {
  const bext_tensor *t;
  void *dst;
};
static void *read_sink(const Bxrm__Reply *r, uint64_t raw, void *ctx) {
  struct read_ctx *rc = ctx;
  const bext_tensor *t = rc->t;
  if (r->body_case != BXRM__REPLY__BODY_DATA || r->data->dtype != (uint32_t)t->dtype ||
      r->data->n_shape != (size_t)t->rank)
    return NULL;
  for (int d = 0; d < t->rank; d++)
    if (r->data->shape[d] != t->shape[d]) return NULL;
  return raw == bxr_nbytes(t->dtype, t->rank, t->shape) ? rc->dst : NULL;
}

static bool rm_read(const bext_tensor *t, void *dst) {
  struct bxrm_ref *ref = t->storage->priv;
  Bxrm__Read rd = BXRM__READ__INIT;
  rd.id = ref->id;
  Bxrm__Request req = BXRM__REQUEST__INIT;
  req.body_case = BXRM__REQUEST__BODY_READ;
  req.read = &rd;
  Bxrm__Reply *r = NULL;
  struct read_ctx rc = {t, dst};
  if (!bxrm_conn_call(ref->c, "bext_read", &req, &r, read_sink, &rc)) return false;
  bool ok = r->body_case == BXRM__REPLY__BODY_DATA && !r->data->error[0];
  if (r->body_case != BXRM__REPLY__BODY_DATA) bxr_error("bext_read: the server answered a read with something else");
  else if (!ok) bxr_error("bext_read: %s", r->data->error);
  bxrm__reply__free_unpacked(r, NULL);
  return ok;
}

static bool rm_sync(struct bext_device *dev) {
  struct bxrm_conn *c = conn_of(dev);
  Bxrm__Sync s = BXRM__SYNC__INIT;
  Bxrm__Request req = BXRM__REQUEST__INIT;
  req.body_case = BXRM__REQUEST__BODY_SYNC;
  req.sync = &s;
  Bxrm__Reply *r = NULL;
  if (!bxrm_conn_call(c, "bext_sync", &req, &r, NULL, NULL)) return false;
  bool ok = r->body_case == BXRM__REPLY__BODY_DONE && !r->done->error[0];
  if (r->body_case != BXRM__REPLY__BODY_DONE) bxr_error("bext_sync: the server answered a sync with something else");
  else if (!ok) bxr_error("bext_sync: %s", r->done->error);
  bxrm__reply__free_unpacked(r, NULL);
  return ok;
}

#define RM_EXEC_(E, n, nin, k0, k1, k2, ns, at, inf) [BXR_OP_##E] = rm_exec,

const struct bxr_backend bxr_backend_remote = {
    .api_version = BXR_BACKEND_API_VERSION,
    .name = "remote",
    .kind = BEXT_BACKEND_REMOTE,
    .host_memory = false,            /* tensors are ids on the server */
    .open = rm_open,                 /* dials and shakes hands */
    .close = rm_close,               /* ends the session */
    .sync = rm_sync,                 /* waits for the server's queue; deferred errors */
    .from_data = rm_from_data,       /* uploads (no reply) */
    .read = rm_read,                 /* downloads: the one round trip of a chain */
    .exec = {BXR_OP_TABLE(RM_EXEC_)},/* every op: queued, inferred here */
    .ext_exec = bxrm_ext_exec,       /* extension ops: sent by id (rm_ext.c) */
};
#undef RM_EXEC_
