/* parse_int.h — internal to the parser: the parse state Lemon carries as
 * %extra_context, and the builders its actions call (ast.c). */
#ifndef BXC_PARSE_INT_H
#define BXC_PARSE_INT_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "ast.h"
#include "diag.h"
#include "parse.h"
#include "source.h"

#define BXC_SNAP_WINDOW 64
#define BXC_SNAP_ENTRY_MAX 32   /* bytes of one Lemon stack entry, at most (parser.y asserts) */

typedef struct bxc_pstate {
    bxc_arena *arena;
    bxc_diag_list *diags;
    const bxc_source *src;
    bxc_file *file;
    bxc_stmt_list repl_stmts;   /* REPL mode: statements in order */
    bool failed;                /* Lemon gave up (error at end of input) */
    bool overflow;              /* parser stack overflowed: stop feeding */
    bool too_deep_reported;     /* one "nested too deeply" per file */
    bxc_span cur;               /* the token being fed (for overflow) */
    bxc_span prev;              /* the token fed before it */
    /* the top BXC_SNAP_WINDOW entries of Lemon's stack before the token,
     * copied whole (one memcpy per token: a strided copy of the state
     * numbers cost a quarter of the parse); parser.y reads them */
    _Alignas(16) unsigned char snap[BXC_SNAP_WINDOW * BXC_SNAP_ENTRY_MAX];
    int snap_from, nsnap;       /* snap[i] is stack entry snap_from + i; depth */
    bool syntax_errors;         /* a syntax error was reported */
    bool quiet_eof;             /* an unterminated literal already explains EOF */
} bxc_pstate;

/* parse.c */
void bxc_ps_overflow(bxc_pstate *ps);
void bxc_ps_report(bxc_pstate *ps, int found, bxc_span span,
                   const int *expected, int nexpected);
/* One "nested too deeply (limit N)" per file. */
void bxc_ps_too_deep(bxc_pstate *ps, bxc_span span, int limit);

/* Lemon's generated entry points (grammar/parser.y, %name bxc_lemon). */
void *bxc_lemonAlloc(void *(*mallocProc)(size_t), bxc_pstate *ps);
void bxc_lemonFree(void *p, void (*freeProc)(void *));
void bxc_lemon(void *p, int major, bxc_span minor);
int bxc_lemon_token_count(void);
void bxc_lemon_snapshot(void *parser, bxc_pstate *ps);
int bxc_lemon_stack_max(void);

/* ---- builders (ast.c); spans are token spans ------------------------- */
bxc_ident bxc_b_ident(bxc_pstate *ps, bxc_span name);
bxc_path *bxc_b_path1(bxc_pstate *ps, bxc_span name);
bxc_path *bxc_b_path_push(bxc_pstate *ps, bxc_path *p, bxc_span name);

void bxc_b_add_item(bxc_pstate *ps, bxc_item *it);
void bxc_b_repl_stmt(bxc_pstate *ps, bxc_stmt *s);
void bxc_b_repl_item(bxc_pstate *ps, bxc_item *it);
void bxc_b_repl_end(bxc_pstate *ps, bxc_expr *tail);
void bxc_b_repl_let(bxc_pstate *ps, bxc_span let, bxc_pat *pat, bxc_tyexpr *ty,
                    bxc_expr *init);

bxc_attr *bxc_b_attr(bxc_pstate *ps, bxc_span hash, bxc_path *path, bool has_args,
                     bxc_attr_arg_list *args, bxc_span end);
bxc_attr_arg *bxc_b_attr_path(bxc_pstate *ps, bxc_path *path);
bxc_attr_arg *bxc_b_attr_string(bxc_pstate *ps, bxc_span str);
bxc_attr_arg *bxc_b_attr_assign(bxc_pstate *ps, bxc_path *name, bxc_expr *value);
bxc_attr_arg *bxc_b_attr_colon(bxc_pstate *ps, bxc_path *name, bxc_attr_arg *arg);
bxc_attr_arg *bxc_b_attr_call(bxc_pstate *ps, bxc_path *name,
                              bxc_attr_arg_list *args, bxc_span end);

bxc_item *bxc_b_use(bxc_pstate *ps, bxc_attr_list *attrs, bool pub, bxc_span kw,
                    bxc_use_kind kind, bxc_path *path, bxc_ident_list *names,
                    bxc_span end);
bxc_item *bxc_b_alias(bxc_pstate *ps, bxc_attr_list *attrs, bool pub, bxc_span kw,
                      bxc_span name, bxc_generic_list *g, bxc_tyexpr *ty, bxc_span end);
/* shape: 0 braces, 1 tuple, 2 unit */
bxc_item *bxc_b_struct(bxc_pstate *ps, bxc_attr_list *attrs, bool pub, bxc_span kw,
                       bxc_span name, bxc_generic_list *g, bxc_field_list *fields,
                       int shape, bxc_span end);
bxc_item *bxc_b_enum(bxc_pstate *ps, bxc_attr_list *attrs, bool pub, bxc_span kw,
                     bxc_span name, bxc_generic_list *g, bxc_variant_list *vs,
                     bxc_span end);
bxc_item *bxc_b_fn_item(bxc_pstate *ps, bxc_fn *fn);
bxc_item *bxc_b_trait(bxc_pstate *ps, bxc_attr_list *attrs, bool pub, bxc_span kw,
                      bxc_span name, bxc_generic_list *g, bxc_tyexpr_list *supers,
                      bxc_fn_list *methods, bxc_span end);
bxc_item *bxc_b_impl(bxc_pstate *ps, bxc_attr_list *attrs, bxc_span kw,
                     bxc_generic_list *g, bxc_tyexpr *trait_ty, bxc_tyexpr *self_ty,
                     bxc_fn_list *methods, bxc_span end);
bxc_generic *bxc_b_generic(bxc_pstate *ps, bxc_span name, bxc_tyexpr_list *bounds);
bxc_field *bxc_b_field(bxc_pstate *ps, bxc_attr_list *attrs, bool pub,
                       const bxc_span *name, bxc_tyexpr *ty);
bxc_variant *bxc_b_variant(bxc_pstate *ps, bxc_attr_list *attrs, bxc_span name,
                           bxc_variant_kind kind, bxc_field_list *fields, bxc_span end);
bxc_fn *bxc_b_fn(bxc_pstate *ps, bxc_attr_list *attrs, bool pub, bxc_span kw,
                 bxc_span name, bxc_generic_list *g, bxc_param_list *params,
                 bxc_tyexpr *ret, bxc_block *body, bxc_span end);
bxc_param *bxc_b_param(bxc_pstate *ps, bxc_attr_list *attrs, bxc_pat *pat,
                       bxc_tyexpr *ty);
bxc_param *bxc_b_self_param(bxc_pstate *ps, bxc_attr_list *attrs, bxc_span start,
                            bool is_ref, bool is_mut, bxc_pat *pat);

bxc_tyexpr *bxc_b_ty_path(bxc_pstate *ps, bxc_path *p, bxc_tyexpr_list *args,
                          bxc_span end);
bxc_tyexpr *bxc_b_ty_ref(bxc_pstate *ps, bxc_span amp, bool is_mut, bxc_tyexpr *inner);
bxc_tyexpr *bxc_b_ty_tuple(bxc_pstate *ps, bxc_span l, bxc_tyexpr_list *elems,
                           bxc_span r);
bxc_tyexpr *bxc_b_ty_tuple1(bxc_pstate *ps, bxc_span l, bxc_tyexpr *first, bxc_span r);
bxc_tyexpr *bxc_b_ty_tuple2(bxc_pstate *ps, bxc_span l, bxc_tyexpr *first,
                            bxc_tyexpr_list *rest, bxc_span r);
bxc_tyexpr *bxc_b_ty_slice(bxc_pstate *ps, bxc_span l, bxc_tyexpr *inner,
                           bxc_expr *len, bxc_span r);

bxc_pat *bxc_b_pat_ident(bxc_pstate *ps, bxc_span start, bxc_span name, bool is_mut);
bxc_pat *bxc_b_pat_tuple(bxc_pstate *ps, bxc_span l, bxc_pat_list *elems, bxc_span r);

bxc_block *bxc_b_block(bxc_pstate *ps, bxc_span l, bxc_stmt_list *stmts,
                       bxc_expr *tail, bxc_span r);
bxc_stmt *bxc_b_empty_stmt(bxc_pstate *ps, bxc_span semi);
bxc_stmt *bxc_b_let(bxc_pstate *ps, bxc_span let, bxc_pat *pat, bxc_tyexpr *ty,
                    bxc_expr *init, bxc_span end);
bxc_stmt *bxc_b_expr_stmt(bxc_pstate *ps, bxc_expr *e, bool semi, bxc_span end);
bxc_stmt *bxc_b_error_stmt(bxc_pstate *ps);

bxc_expr *bxc_b_block_expr(bxc_pstate *ps, bxc_block *b);
bxc_expr *bxc_b_if(bxc_pstate *ps, bxc_span kw, bxc_expr *cond, bxc_block *then_b,
                   bxc_expr *else_e);
bxc_expr *bxc_b_while(bxc_pstate *ps, bxc_span kw, bxc_expr *cond, bxc_block *body);
bxc_expr *bxc_b_for(bxc_pstate *ps, bxc_span kw, bxc_pat *pat, bxc_expr *iter,
                    bxc_block *body);
bxc_expr *bxc_b_loop(bxc_pstate *ps, bxc_span kw, bxc_block *body);
bxc_expr *bxc_b_int(bxc_pstate *ps, bxc_span t);
bxc_expr *bxc_b_float(bxc_pstate *ps, bxc_span t);
bxc_expr *bxc_b_string(bxc_pstate *ps, bxc_span t);
bxc_expr *bxc_b_bool(bxc_pstate *ps, bxc_span t, bool v);
bxc_expr *bxc_b_path_expr(bxc_pstate *ps, bxc_path *p);
bxc_expr *bxc_b_struct_lit(bxc_pstate *ps, bxc_path *p, bxc_field_init_list *f,
                           bxc_span r);
bxc_expr *bxc_b_tuple(bxc_pstate *ps, bxc_span l, bxc_expr *first,
                      bxc_expr_list *rest, bxc_span r);
bxc_expr *bxc_b_paren(bxc_pstate *ps, bxc_span l, bxc_expr *e, bxc_span r);
bxc_expr *bxc_b_array(bxc_pstate *ps, bxc_span l, bxc_expr_list *elems, bxc_span r);
bxc_expr *bxc_b_unary(bxc_pstate *ps, bxc_span op_span, bxc_unop op, bxc_expr *e);
bxc_expr *bxc_b_binary(bxc_pstate *ps, bxc_binop op, bxc_expr *l, bxc_expr *r);
bxc_expr *bxc_b_range(bxc_pstate *ps, bxc_expr *l, bxc_expr *r, bool inclusive);
bxc_expr *bxc_b_assign(bxc_pstate *ps, bxc_binop op, bxc_expr *l, bxc_expr *r);
bxc_expr *bxc_b_cast(bxc_pstate *ps, bxc_expr *e, bxc_tyexpr *ty);
bxc_expr *bxc_b_call(bxc_pstate *ps, bxc_expr *f, bxc_expr_list *args, bxc_span r);
bxc_expr *bxc_b_method(bxc_pstate *ps, bxc_expr *recv, bxc_span name,
                       bxc_expr_list *args, bxc_span r);
bxc_expr *bxc_b_field_access(bxc_pstate *ps, bxc_expr *obj, bxc_span name);
bxc_expr *bxc_b_tuple_field(bxc_pstate *ps, bxc_expr *obj, bxc_span index);
bxc_expr *bxc_b_index(bxc_pstate *ps, bxc_expr *obj, bxc_expr *idx, bxc_span r);
bxc_expr *bxc_b_return(bxc_pstate *ps, bxc_span kw, bxc_expr *value);
bxc_expr *bxc_b_jump(bxc_pstate *ps, bxc_expr_kind kind, bxc_span kw);
bxc_expr *bxc_b_closure(bxc_pstate *ps, bxc_span l, bxc_param_list *params,
                        bxc_tyexpr *ret, bxc_expr *body);
bxc_field_init *bxc_b_field_init(bxc_pstate *ps, bxc_span name, bxc_expr *value);

#endif
