/* fusion_kernel.h — the optimizer of a plan (fusion_kernel.c): which
 * records of a segment fuse (one legality function), the kernel IR of
 * each fused group, and how a plan's groups run. */
#ifndef BXFU_FUSION_KERNEL_H
#define BXFU_FUSION_KERNEL_H

#include "fusion.h"

struct bxk_kernel;

/* A segment as the plan builder sees it (fusion_plan.c): n live records;
 * src[i][k]: the record whose output is input k of record i, -1 when it
 * comes from outside the segment; uses[i]: how many inputs in the segment
 * read record i's value; held[i]: its value is held outside the segment
 * (by the user); handle[i]: its wrapper, as a later record holds it;
 * first_use[i]: the first record reading it, -1 when none does;
 * nsrc[i]: how many inputs record i has (the length of src[i]). */
struct bxfu_segment {
  int n;
  struct bxfu_rec *rec;
  int **src;
  int *uses, *first_use, *nsrc;
  bool *held;
  bext_tensor **handle;
};

/* One fused group: records run as one kernel at the position of the
 * last one (root).  Inputs from outside the group are its bindings 0..
 * next-1 (one per distinct value: ext_rec[b] / ext_in[b] say where it is
 * first read), the root's output is binding next, and the members of a
 * reduction's chain that are read after the group or held (wout[w]) are
 * bindings next+1+w; each *_scalar member has a scalar parameter
 * (scal_rec[s]).  A group with a reduction runs one unit per row (per
 * element of the reduction's output): its reductions loop over the row
 * with their chains evaluated at each element, and in a row kernel (a
 * reduction's value read inside the group: softmax) a last loop stores
 * the root at every element of the row. */
struct bxfu_group {
  int root, n;
  int *member;                  /* record indices, ascending */
  int next, *ext_rec, *ext_in;
  int nwout, *wout;             /* members whose values are also stored */
  int nscal, *scal_rec;
  struct bxk_kernel *ir;        /* NULL: could not be expressed (runs unfused) */
  struct bxr_kernel *k;         /* compiled; NULL when the device cannot run IR */
  uint32_t numel;               /* units: elements of the root's output, or rows */
};

/* A plan's grouping: group_of[i] is the group of record i, -1 when it
 * runs alone. */
struct bxfu_groups {
  int n_rec;
  int *group_of;
  int ngroups;
  struct bxfu_group *g;
};

/* Groups claimed by custom optimizers (bext/fusion.h; fusion_custom.c):
 * claim_of[i] is the custom group of record i, -1 when none claimed it
 * (claim_of NULL: no claims).  A group runs at its last member. */
#define BXFU_CUSTOM_MAX 64
struct bext_fusion_kernel;
struct bxfu_cgroup {
  int n;
  int member[BXFU_CUSTOM_MAX];     /* ascending; the last is the root */
  const struct bext_fusion_kernel *k;
  const char *opt;                 /* the optimizer's name */
};
struct bxfu_custom {
  int *claim_of;
  int ngroups;
  struct bxfu_cgroup *grp;
};
/* Asks every registered optimizer about the segment (plan build). */
BXR_FUNC void bxfu_custom_build(struct bxfu_custom *cu, const struct bxfu_segment *g);
BXR_FUNC void bxfu_custom_free(struct bxfu_custom *cu);
/* Record i when a custom group claims it: runs the group if i is its
 * root, nothing else (the root runs it); true.  False: not claimed. */
BXR_FUNC bool bxfu_custom_run_at(const struct bxfu_custom *cu, const struct bxfu_segment *g, struct bxfu_stream *s,
                                 int i);

/* The body of learned kernel c (fusion_cube.c) at element idx of its
 * output, its loads being the member's inputs there (in[slot], bxk_val)
 * and its scalar q the group kernel's scalar scal + q: appended to b, its
 * stored value returned. */
struct bxk_builder;
BXR_FUNC uint32_t bxfu_cube_inline(struct bxk_builder *b, const struct bxfu_cube *c, const uint32_t *in, uint32_t idx,
                                   int scal);
/* Learned kernel c's scalar parameters: how many, and the IR type of
 * parameter q (enum bxk_type). */
BXR_FUNC int bxfu_cube_nscalars(const struct bxfu_cube *c);
BXR_FUNC unsigned bxfu_cube_scalar_type(const struct bxfu_cube *c, int q);
/* Scalar parameter q of extension record r's learned kernel for this
 * call: the call's own scalar argument bound to it, in the parameter's
 * type, into *out (one 8-byte kernel slot).  False with the error set
 * when the call's scalars cannot be read. */
BXR_FUNC bool bxfu_cube_scalar(const struct bxfu_rec *r, int q, bext_kernel_scalar *out);

/* Fusion legality, in one place (house style 14): may record p's value
 * stay inside the kernel of its consumer c? */
BXR_FUNC bool bxfu_can_fuse(const struct bxfu_segment *g, int p, int c);
/* Groups the segment's elementwise records and builds (and, when dev's
 * inner device has kernel_prepare, compiles) each group's kernel; records
 * a custom optimizer claimed (claimed[i] >= 0; claimed may be NULL) are
 * left out. */
BXR_FUNC void bxfu_groups_build(struct bxfu_groups *out, const struct bxfu_segment *g, struct bext_device *dev,
                                const int *claimed);
BXR_FUNC void bxfu_groups_free(struct bxfu_groups *gs);
/* Runs the segment's records with this grouping (and cu's claims). */
BXR_FUNC void bxfu_groups_run(const struct bxfu_groups *gs, const struct bxfu_segment *g, struct bxfu_stream *s,
                              const struct bxfu_custom *cu);
/* BEXT_FUSION_DUMP=DIR: writes a new plan as Graphviz DOT and its
 * kernels' IR text into DIR. */
BXR_FUNC void bxfu_plan_dump(const struct bxfu_groups *gs, const struct bxfu_segment *g, struct bext_device *dev);

#endif /* BXFU_FUSION_KERNEL_H */
