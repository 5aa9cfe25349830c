/* parser.y — the Lemon grammar of .bext files (language.md §1–§8).
 *
 * SQLite style: token codes TK_*, the token value is a span into the source
 * (no copies), the parse state rides along as %extra_context, and every
 * action is one line calling a builder (bxc_b_*, compiler/ast.c).  All
 * nodes live in the compilation's arena, so no non-terminal needs a
 * %destructor: a value dropped during error recovery is reclaimed with the
 * arena.
 *
 * Rust's rules that matter for the grammar:
 *  - a struct literal cannot appear in an `if`/`while`/`for` head; the
 *    driver (parse.c) emits `{` after an identifier as STRUCT_LBRACE except
 *    at the head's own nesting level, so `if a { }` is a block;
 *  - a block-like expression (`if`, `while`, `for`, `loop`, `{}`) at the
 *    start of a statement ends the statement (no `;` needed): the rule
 *    `stmt ::= blockexpr` outranks `expr ::= blockexpr` (precedence
 *    BLOCKSTMT over LOWEST resolves the reduce/reduce choice).
 * Error recovery: `error` at item, trait/impl-member and statement level.
 * The parser stack is fixed (%stack_size); overflowing it is reported as
 * "nested too deeply". */

%include {
#include "parse_int.h"
struct yyParser;
static void bxc_ps_syntax_error(bxc_pstate *ps, struct yyParser *p, int major,
                                bxc_span span);
}

%token_prefix TK_
%name bxc_lemon
%token_type {bxc_span}
%extra_context {bxc_pstate *ps}
%stack_size 2048
%start_symbol start

%stack_overflow { bxc_ps_overflow(ps); }
%syntax_error { bxc_ps_syntax_error(ps, yypParser, yymajor, TOKEN); }
%parse_failure { ps->failed = true; }

/* Tokens produced by the lexer but not used by any rule still need codes. */
%token REPL_START STRUCT_LBRACE QUESTION FATARROW.

/* Precedence, lowest first; declared once.  LOWEST and BLOCKSTMT are
 * pseudo-tokens used only to rank rules. */
%nonassoc LOWEST.
%right EQ PLUSEQ MINUSEQ STAREQ SLASHEQ PERCENTEQ.
%nonassoc DOTDOT DOTDOTEQ.
%left OROR.
%left ANDAND.
%nonassoc EQEQ NE LT LE GT GE.
%left PIPE.
%left CARET.
%left AMP.
%left PLUS MINUS.
%left STAR SLASH PERCENT.
%left AS.
%right UNARY BANG.
%left DOT LBRACKET LBRACE.
%left LPAREN.
%nonassoc BLOCKSTMT.

/* ---- file / REPL ------------------------------------------------------- */

start ::= items.
start ::= REPL_START repl_elems.                          { bxc_b_repl_end(ps, NULL); }
start ::= REPL_START repl_elems expr(E).                  { bxc_b_repl_end(ps, E); }
start ::= REPL_START repl_elems LET(L) pat(P) opt_ty(T) EQ expr(E). { bxc_b_repl_let(ps, L, P, T, E); }

items ::= .
items ::= items item(I).                                  { bxc_b_add_item(ps, I); }
items ::= items error.

repl_elems ::= .
repl_elems ::= repl_elems stmt(S).                        { bxc_b_repl_stmt(ps, S); }
repl_elems ::= repl_elems item(I).                        { bxc_b_repl_item(ps, I); }

/* ---- attributes --------------------------------------------------------- */

%type attrs {bxc_attr_list}
%type attr {bxc_attr *}
%type attr_args {bxc_attr_arg_list}
%type attr_args1 {bxc_attr_arg_list}
%type attr_arg {bxc_attr_arg *}

attrs(A) ::= .                                            { memset(&A, 0, sizeof A); }
attrs(A) ::= attrs(B) attr(X).                            { A = B; BXC_LIST_PUSH(ps->arena, &A, X); }

attr(A) ::= HASH(H) LBRACKET path(P) RBRACKET(R).         { A = bxc_b_attr(ps, H, P, false, NULL, R); }
attr(A) ::= HASH(H) LBRACKET path(P) LPAREN attr_args(G) RPAREN RBRACKET(R). { A = bxc_b_attr(ps, H, P, true, &G, R); }

attr_args(A) ::= .                                        { memset(&A, 0, sizeof A); }
attr_args(A) ::= attr_args1(B) opt_comma.                 { A = B; }
attr_args1(A) ::= attr_arg(X).                            { memset(&A, 0, sizeof A); BXC_LIST_PUSH(ps->arena, &A, X); }
attr_args1(A) ::= attr_args1(B) COMMA attr_arg(X).        { A = B; BXC_LIST_PUSH(ps->arena, &A, X); }

attr_arg(A) ::= path(P).                                  { A = bxc_b_attr_path(ps, P); }
attr_arg(A) ::= STRING(S).                                { A = bxc_b_attr_string(ps, S); }
attr_arg(A) ::= path(P) EQ expr(E).                       { A = bxc_b_attr_assign(ps, P, E); }
attr_arg(A) ::= path(P) COLON attr_arg(X).                { A = bxc_b_attr_colon(ps, P, X); }
attr_arg(A) ::= path(P) LPAREN attr_args(G) RPAREN(R).    { A = bxc_b_attr_call(ps, P, &G, R); }

opt_comma ::= .
opt_comma ::= COMMA.

%type vis {bool}
vis(A) ::= .                                              { A = false; }
vis(A) ::= PUB.                                           { A = true; }

/* ---- items -------------------------------------------------------------- */

%type item {bxc_item *}
%type use_names {bxc_ident_list}
%type generics {bxc_generic_list}
%type generic_list {bxc_generic_list}
%type generic {bxc_generic *}
%type bounds {bxc_tyexpr_list}
%type supertraits {bxc_tyexpr_list}
%type fields {bxc_field_list}
%type fields1 {bxc_field_list}
%type field {bxc_field *}
%type tfields {bxc_field_list}
%type tfields1 {bxc_field_list}
%type tfield {bxc_field *}
%type variants {bxc_variant_list}
%type variants1 {bxc_variant_list}
%type variant {bxc_variant *}
%type fn_decl {bxc_fn *}
%type members {bxc_fn_list}
%type params {bxc_param_list}
%type params1 {bxc_param_list}
%type param {bxc_param *}
%type ret {bxc_tyexpr *}
%type item_block {bxc_block *}

item(A) ::= attrs(T) vis(V) USE(K) path(P) SEMI(E).       { A = bxc_b_use(ps, &T, V, K, BXC_USE_SINGLE, P, NULL, E); }
item(A) ::= attrs(T) vis(V) USE(K) path(P) COLONCOLON LBRACE use_names(N) opt_comma RBRACE SEMI(E). { A = bxc_b_use(ps, &T, V, K, BXC_USE_GROUP, P, &N, E); }
item(A) ::= attrs(T) vis(V) USE(K) path(P) COLONCOLON STAR SEMI(E). { A = bxc_b_use(ps, &T, V, K, BXC_USE_GLOB, P, NULL, E); }
item(A) ::= attrs(T) vis(V) TYPE(K) IDENT(N) generics(G) EQ ty(Y) SEMI(E). { A = bxc_b_alias(ps, &T, V, K, N, &G, Y, E); }
item(A) ::= attrs(T) vis(V) STRUCT(K) IDENT(N) generics(G) lbrace fields(F) RBRACE(E). { A = bxc_b_struct(ps, &T, V, K, N, &G, &F, 0, E); }
item(A) ::= attrs(T) vis(V) STRUCT(K) IDENT(N) generics(G) LPAREN tfields(F) RPAREN SEMI(E). { A = bxc_b_struct(ps, &T, V, K, N, &G, &F, 1, E); }
item(A) ::= attrs(T) vis(V) STRUCT(K) IDENT(N) generics(G) SEMI(E). { A = bxc_b_struct(ps, &T, V, K, N, &G, NULL, 2, E); }
item(A) ::= attrs(T) vis(V) ENUM(K) IDENT(N) generics(G) lbrace variants(F) RBRACE(E). { A = bxc_b_enum(ps, &T, V, K, N, &G, &F, E); }
item(A) ::= fn_decl(F).                                   { A = bxc_b_fn_item(ps, F); }
item(A) ::= attrs(T) vis(V) TRAIT(K) IDENT(N) generics(G) supertraits(S) lbrace members(M) RBRACE(E). { A = bxc_b_trait(ps, &T, V, K, N, &G, &S, &M, E); }
item(A) ::= attrs(T) IMPL(K) generics(G) ty(X) FOR ty(Y) lbrace members(M) RBRACE(E). { A = bxc_b_impl(ps, &T, K, &G, X, Y, &M, E); }
item(A) ::= attrs(T) IMPL(K) generics(G) ty(Y) lbrace members(M) RBRACE(E). { A = bxc_b_impl(ps, &T, K, &G, NULL, Y, &M, E); }

/* `{` opening an item body: after an identifier the driver emits
 * STRUCT_LBRACE (`struct S {`, `-> Shape {`); both open the body. */
lbrace ::= LBRACE.
lbrace ::= STRUCT_LBRACE.

use_names(A) ::= IDENT(N).                                { memset(&A, 0, sizeof A); BXC_LIST_PUSH(ps->arena, &A, bxc_b_ident(ps, N)); }
use_names(A) ::= use_names(B) COMMA IDENT(N).             { A = B; BXC_LIST_PUSH(ps->arena, &A, bxc_b_ident(ps, N)); }

generics(A) ::= .                                         { memset(&A, 0, sizeof A); }
generics(A) ::= LT generic_list(B) opt_comma GT.          { A = B; }
generic_list(A) ::= generic(X).                           { memset(&A, 0, sizeof A); BXC_LIST_PUSH(ps->arena, &A, X); }
generic_list(A) ::= generic_list(B) COMMA generic(X).     { A = B; BXC_LIST_PUSH(ps->arena, &A, X); }
generic(A) ::= IDENT(N).                                  { A = bxc_b_generic(ps, N, NULL); }
generic(A) ::= IDENT(N) COLON bounds(B).                  { A = bxc_b_generic(ps, N, &B); }
bounds(A) ::= ty(X).                                      { memset(&A, 0, sizeof A); BXC_LIST_PUSH(ps->arena, &A, X); }
bounds(A) ::= bounds(B) PLUS ty(X).                       { A = B; BXC_LIST_PUSH(ps->arena, &A, X); }
supertraits(A) ::= .                                      { memset(&A, 0, sizeof A); }
supertraits(A) ::= COLON bounds(B).                       { A = B; }

fields(A) ::= .                                           { memset(&A, 0, sizeof A); }
fields(A) ::= fields1(B) opt_comma.                       { A = B; }
fields1(A) ::= field(X).                                  { memset(&A, 0, sizeof A); BXC_LIST_PUSH(ps->arena, &A, X); }
fields1(A) ::= fields1(B) COMMA field(X).                 { A = B; BXC_LIST_PUSH(ps->arena, &A, X); }
field(A) ::= attrs(T) vis(V) IDENT(N) COLON ty(Y).        { A = bxc_b_field(ps, &T, V, &N, Y); }

tfields(A) ::= .                                          { memset(&A, 0, sizeof A); }
tfields(A) ::= tfields1(B) opt_comma.                     { A = B; }
tfields1(A) ::= tfield(X).                                { memset(&A, 0, sizeof A); BXC_LIST_PUSH(ps->arena, &A, X); }
tfields1(A) ::= tfields1(B) COMMA tfield(X).              { A = B; BXC_LIST_PUSH(ps->arena, &A, X); }
tfield(A) ::= attrs(T) vis(V) ty(Y).                      { A = bxc_b_field(ps, &T, V, NULL, Y); }

variants(A) ::= .                                         { memset(&A, 0, sizeof A); }
variants(A) ::= variants1(B) opt_comma.                   { A = B; }
variants1(A) ::= variant(X).                              { memset(&A, 0, sizeof A); BXC_LIST_PUSH(ps->arena, &A, X); }
variants1(A) ::= variants1(B) COMMA variant(X).           { A = B; BXC_LIST_PUSH(ps->arena, &A, X); }
variant(A) ::= attrs(T) IDENT(N).                         { A = bxc_b_variant(ps, &T, N, BXC_VARIANT_UNIT, NULL, N); }
variant(A) ::= attrs(T) IDENT(N) LPAREN tfields(F) RPAREN(E). { A = bxc_b_variant(ps, &T, N, BXC_VARIANT_TUPLE, &F, E); }
variant(A) ::= attrs(T) IDENT(N) lbrace fields(F) RBRACE(E). { A = bxc_b_variant(ps, &T, N, BXC_VARIANT_STRUCT, &F, E); }

fn_decl(A) ::= attrs(T) vis(V) FN(K) IDENT(N) generics(G) LPAREN params(P) RPAREN ret(R) SEMI(E). { A = bxc_b_fn(ps, &T, V, K, N, &G, &P, R, NULL, E); }
fn_decl(A) ::= attrs(T) vis(V) FN(K) IDENT(N) generics(G) LPAREN params(P) RPAREN ret(R) item_block(B). { A = bxc_b_fn(ps, &T, V, K, N, &G, &P, R, B, B->span); }

/* Trait and impl bodies: methods; a broken member is skipped. */
members(A) ::= .                                          { memset(&A, 0, sizeof A); }
members(A) ::= members(B) fn_decl(F).                     { A = B; BXC_LIST_PUSH(ps->arena, &A, F); }
members(A) ::= members(B) error.                          { A = B; }

params(A) ::= .                                           { memset(&A, 0, sizeof A); }
params(A) ::= params1(B) opt_comma.                       { A = B; }
params1(A) ::= param(X).                                  { memset(&A, 0, sizeof A); BXC_LIST_PUSH(ps->arena, &A, X); }
params1(A) ::= params1(B) COMMA param(X).                 { A = B; BXC_LIST_PUSH(ps->arena, &A, X); }
param(A) ::= attrs(T) pat(P) COLON ty(Y).                 { A = bxc_b_param(ps, &T, P, Y); }
param(A) ::= attrs(T) pat(P).                             { A = bxc_b_self_param(ps, &T, P->span, false, false, P); }
param(A) ::= attrs(T) AMP(M) IDENT(N).                    { A = bxc_b_self_param(ps, &T, M, true, false, bxc_b_pat_ident(ps, N, N, false)); }
param(A) ::= attrs(T) AMP(M) MUT IDENT(N).                { A = bxc_b_self_param(ps, &T, M, true, true, bxc_b_pat_ident(ps, N, N, false)); }

ret(A) ::= .                                              { A = NULL; }
ret(A) ::= ARROW ty(Y).                                   { A = Y; }

item_block(A) ::= block(B).                               { A = B; }
item_block(A) ::= STRUCT_LBRACE(L) stmts(S) RBRACE(R).    { A = bxc_b_block(ps, L, &S, NULL, R); }
item_block(A) ::= STRUCT_LBRACE(L) stmts(S) expr(E) RBRACE(R). { A = bxc_b_block(ps, L, &S, E, R); }

/* ---- paths and types ---------------------------------------------------- */

%type path {bxc_path *}
%type ty {bxc_tyexpr *}
%type cast_ty {bxc_tyexpr *}
%type ty_list1 {bxc_tyexpr_list}
%type opt_ty {bxc_tyexpr *}

path(A) ::= IDENT(N).                                     { A = bxc_b_path1(ps, N); }
path(A) ::= path(B) COLONCOLON IDENT(N).                  { A = bxc_b_path_push(ps, B, N); }

ty(A) ::= path(P).                                        { A = bxc_b_ty_path(ps, P, NULL, P->span); }
ty(A) ::= path(P) LT ty_list1(L) opt_comma GT(E).         { A = bxc_b_ty_path(ps, P, &L, E); }
ty(A) ::= AMP(M) ty(Y).                                   { A = bxc_b_ty_ref(ps, M, false, Y); }
ty(A) ::= AMP(M) MUT ty(Y).                               { A = bxc_b_ty_ref(ps, M, true, Y); }
ty(A) ::= ANDAND(M) ty(Y).                                { A = bxc_b_ty_ref(ps, M, false, bxc_b_ty_ref(ps, M, false, Y)); }
ty(A) ::= LPAREN(L) RPAREN(R).                            { A = bxc_b_ty_tuple(ps, L, NULL, R); }
ty(A) ::= LPAREN ty(Y) RPAREN.                            { A = Y; }
ty(A) ::= LPAREN(L) ty(Y) COMMA RPAREN(R).                { A = bxc_b_ty_tuple1(ps, L, Y, R); }
ty(A) ::= LPAREN(L) ty(Y) COMMA ty_list1(T) opt_comma RPAREN(R). { A = bxc_b_ty_tuple2(ps, L, Y, &T, R); }
ty(A) ::= LBRACKET(L) ty(Y) RBRACKET(R).                  { A = bxc_b_ty_slice(ps, L, Y, NULL, R); }
ty(A) ::= LBRACKET(L) ty(Y) SEMI expr(N) RBRACKET(R).     { A = bxc_b_ty_slice(ps, L, Y, N, R); }
ty_list1(A) ::= ty(X).                                    { memset(&A, 0, sizeof A); BXC_LIST_PUSH(ps->arena, &A, X); }
ty_list1(A) ::= ty_list1(B) COMMA ty(X).                  { A = B; BXC_LIST_PUSH(ps->arena, &A, X); }

/* `x as u32 < y` must not read `<` as generic arguments: casts take a
 * plain path. */
cast_ty(A) ::= path(P).                                   { A = bxc_b_ty_path(ps, P, NULL, P->span); }

opt_ty(A) ::= .                                           { A = NULL; }
opt_ty(A) ::= COLON ty(Y).                                { A = Y; }

/* ---- patterns ----------------------------------------------------------- */

%type pat {bxc_pat *}
%type pat_list1 {bxc_pat_list}

pat(A) ::= IDENT(N).                                      { A = bxc_b_pat_ident(ps, N, N, false); }
pat(A) ::= MUT(M) IDENT(N).                               { A = bxc_b_pat_ident(ps, M, N, true); }
pat(A) ::= LPAREN(L) RPAREN(R).                           { A = bxc_b_pat_tuple(ps, L, NULL, R); }
pat(A) ::= LPAREN(L) pat_list1(P) opt_comma RPAREN(R).    { A = bxc_b_pat_tuple(ps, L, &P, R); }
pat_list1(A) ::= pat(X).                                  { memset(&A, 0, sizeof A); BXC_LIST_PUSH(ps->arena, &A, X); }
pat_list1(A) ::= pat_list1(B) COMMA pat(X).               { A = B; BXC_LIST_PUSH(ps->arena, &A, X); }

/* ---- statements and blocks ---------------------------------------------- */

%type block {bxc_block *}
%type stmts {bxc_stmt_list}
%type stmt {bxc_stmt *}

block(A) ::= LBRACE(L) stmts(S) RBRACE(R).                { A = bxc_b_block(ps, L, &S, NULL, R); }
block(A) ::= LBRACE(L) stmts(S) expr(E) RBRACE(R).        { A = bxc_b_block(ps, L, &S, E, R); }

stmts(A) ::= .                                            { memset(&A, 0, sizeof A); }
stmts(A) ::= stmts(B) stmt(X).                            { A = B; BXC_LIST_PUSH(ps->arena, &A, X); }

stmt(A) ::= SEMI(S).                                      { A = bxc_b_empty_stmt(ps, S); }
stmt(A) ::= LET(L) pat(P) opt_ty(T) SEMI(E).              { A = bxc_b_let(ps, L, P, T, NULL, E); }
stmt(A) ::= LET(L) pat(P) opt_ty(T) EQ expr(X) SEMI(E).   { A = bxc_b_let(ps, L, P, T, X, E); }
stmt(A) ::= expr(X) SEMI(E).                              { A = bxc_b_expr_stmt(ps, X, true, E); }
stmt(A) ::= blockexpr(X). [BLOCKSTMT]                     { A = bxc_b_expr_stmt(ps, X, false, X->span); }
stmt(A) ::= error.                                        { A = bxc_b_error_stmt(ps); }

/* ---- expressions -------------------------------------------------------- */

%type expr {bxc_expr *}
%type blockexpr {bxc_expr *}
%type ifexpr {bxc_expr *}
%type expr_list1 {bxc_expr_list}
%type call_args {bxc_expr_list}
%type field_inits {bxc_field_init_list}
%type field_inits1 {bxc_field_init_list}
%type field_init {bxc_field_init *}
%type cparams {bxc_param_list}
%type cparam {bxc_param *}

blockexpr(A) ::= block(B).                                { A = bxc_b_block_expr(ps, B); }
blockexpr(A) ::= ifexpr(X).                               { A = X; }
blockexpr(A) ::= WHILE(K) expr(C) block(B).               { A = bxc_b_while(ps, K, C, B); }
blockexpr(A) ::= FOR(K) pat(P) IN expr(I) block(B).       { A = bxc_b_for(ps, K, P, I, B); }
blockexpr(A) ::= LOOP(K) block(B).                        { A = bxc_b_loop(ps, K, B); }
ifexpr(A) ::= IF(K) expr(C) block(B).                     { A = bxc_b_if(ps, K, C, B, NULL); }
ifexpr(A) ::= IF(K) expr(C) block(B) ELSE block(E).       { A = bxc_b_if(ps, K, C, B, bxc_b_block_expr(ps, E)); }
ifexpr(A) ::= IF(K) expr(C) block(B) ELSE ifexpr(E).      { A = bxc_b_if(ps, K, C, B, E); }

expr(A) ::= blockexpr(X). [LOWEST]                        { A = X; }

expr(A) ::= INT(T).                                       { A = bxc_b_int(ps, T); }
expr(A) ::= FLOAT(T).                                     { A = bxc_b_float(ps, T); }
expr(A) ::= STRING(T).                                    { A = bxc_b_string(ps, T); }
expr(A) ::= TRUE(T).                                      { A = bxc_b_bool(ps, T, true); }
expr(A) ::= FALSE(T).                                     { A = bxc_b_bool(ps, T, false); }
expr(A) ::= path(P).                                      { A = bxc_b_path_expr(ps, P); }
expr(A) ::= path(P) STRUCT_LBRACE field_inits(F) RBRACE(R). { A = bxc_b_struct_lit(ps, P, &F, R); }
expr(A) ::= LPAREN(L) RPAREN(R).                          { A = bxc_b_tuple(ps, L, NULL, NULL, R); }
expr(A) ::= LPAREN(L) expr(X) RPAREN(R).                  { A = bxc_b_paren(ps, L, X, R); }
expr(A) ::= LPAREN(L) expr(X) COMMA RPAREN(R).            { A = bxc_b_tuple(ps, L, X, NULL, R); }
expr(A) ::= LPAREN(L) expr(X) COMMA expr_list1(T) opt_comma RPAREN(R). { A = bxc_b_tuple(ps, L, X, &T, R); }
expr(A) ::= LBRACKET(L) RBRACKET(R).                      { A = bxc_b_array(ps, L, NULL, R); }
expr(A) ::= LBRACKET(L) expr_list1(T) opt_comma RBRACKET(R). { A = bxc_b_array(ps, L, &T, R); }

expr(A) ::= MINUS(O) expr(X). [UNARY]                     { A = bxc_b_unary(ps, O, BXC_UN_NEG, X); }
expr(A) ::= BANG(O) expr(X). [UNARY]                      { A = bxc_b_unary(ps, O, BXC_UN_NOT, X); }
expr(A) ::= STAR(O) expr(X). [UNARY]                      { A = bxc_b_unary(ps, O, BXC_UN_DEREF, X); }
expr(A) ::= AMP(O) expr(X). [UNARY]                       { A = bxc_b_unary(ps, O, BXC_UN_REF, X); }
expr(A) ::= AMP(O) MUT expr(X). [UNARY]                   { A = bxc_b_unary(ps, O, BXC_UN_REF_MUT, X); }
expr(A) ::= ANDAND(O) expr(X). [UNARY]                    { A = bxc_b_unary(ps, O, BXC_UN_REF, bxc_b_unary(ps, O, BXC_UN_REF, X)); }

expr(A) ::= expr(L) PLUS expr(R).                         { A = bxc_b_binary(ps, BXC_BIN_ADD, L, R); }
expr(A) ::= expr(L) MINUS expr(R).                        { A = bxc_b_binary(ps, BXC_BIN_SUB, L, R); }
expr(A) ::= expr(L) STAR expr(R).                         { A = bxc_b_binary(ps, BXC_BIN_MUL, L, R); }
expr(A) ::= expr(L) SLASH expr(R).                        { A = bxc_b_binary(ps, BXC_BIN_DIV, L, R); }
expr(A) ::= expr(L) PERCENT expr(R).                      { A = bxc_b_binary(ps, BXC_BIN_REM, L, R); }
expr(A) ::= expr(L) ANDAND expr(R).                       { A = bxc_b_binary(ps, BXC_BIN_AND, L, R); }
expr(A) ::= expr(L) OROR expr(R).                         { A = bxc_b_binary(ps, BXC_BIN_OR, L, R); }
expr(A) ::= expr(L) AMP expr(R).                          { A = bxc_b_binary(ps, BXC_BIN_BITAND, L, R); }
expr(A) ::= expr(L) PIPE expr(R).                         { A = bxc_b_binary(ps, BXC_BIN_BITOR, L, R); }
expr(A) ::= expr(L) CARET expr(R).                        { A = bxc_b_binary(ps, BXC_BIN_BITXOR, L, R); }
expr(A) ::= expr(L) EQEQ expr(R).                         { A = bxc_b_binary(ps, BXC_BIN_EQ, L, R); }
expr(A) ::= expr(L) NE expr(R).                           { A = bxc_b_binary(ps, BXC_BIN_NE, L, R); }
expr(A) ::= expr(L) LT expr(R).                           { A = bxc_b_binary(ps, BXC_BIN_LT, L, R); }
expr(A) ::= expr(L) LE expr(R).                           { A = bxc_b_binary(ps, BXC_BIN_LE, L, R); }
expr(A) ::= expr(L) GT expr(R).                           { A = bxc_b_binary(ps, BXC_BIN_GT, L, R); }
expr(A) ::= expr(L) GE expr(R).                           { A = bxc_b_binary(ps, BXC_BIN_GE, L, R); }
expr(A) ::= expr(L) DOTDOT expr(R).                       { A = bxc_b_range(ps, L, R, false); }
expr(A) ::= expr(L) DOTDOTEQ expr(R).                     { A = bxc_b_range(ps, L, R, true); }

expr(A) ::= expr(L) EQ expr(R).                           { A = bxc_b_assign(ps, BXC_BIN_NONE, L, R); }
expr(A) ::= expr(L) PLUSEQ expr(R).                       { A = bxc_b_assign(ps, BXC_BIN_ADD, L, R); }
expr(A) ::= expr(L) MINUSEQ expr(R).                      { A = bxc_b_assign(ps, BXC_BIN_SUB, L, R); }
expr(A) ::= expr(L) STAREQ expr(R).                       { A = bxc_b_assign(ps, BXC_BIN_MUL, L, R); }
expr(A) ::= expr(L) SLASHEQ expr(R).                      { A = bxc_b_assign(ps, BXC_BIN_DIV, L, R); }
expr(A) ::= expr(L) PERCENTEQ expr(R).                    { A = bxc_b_assign(ps, BXC_BIN_REM, L, R); }

expr(A) ::= expr(X) AS cast_ty(T).                        { A = bxc_b_cast(ps, X, T); }
expr(A) ::= expr(F) LPAREN call_args(G) RPAREN(R).        { A = bxc_b_call(ps, F, &G, R); }
expr(A) ::= expr(X) DOT IDENT(N) LPAREN call_args(G) RPAREN(R). { A = bxc_b_method(ps, X, N, &G, R); }
expr(A) ::= expr(X) DOT IDENT(N). [DOT]                   { A = bxc_b_field_access(ps, X, N); }
expr(A) ::= expr(X) DOT INT(N).                           { A = bxc_b_tuple_field(ps, X, N); }
expr(A) ::= expr(X) LBRACKET expr(I) RBRACKET(R).         { A = bxc_b_index(ps, X, I, R); }

expr(A) ::= RETURN(K). [LOWEST]                           { A = bxc_b_return(ps, K, NULL); }
expr(A) ::= RETURN(K) expr(X). [LOWEST]                   { A = bxc_b_return(ps, K, X); }
expr(A) ::= BREAK(K).                                     { A = bxc_b_jump(ps, BXC_EXPR_BREAK, K); }
expr(A) ::= CONTINUE(K).                                  { A = bxc_b_jump(ps, BXC_EXPR_CONTINUE, K); }

expr(A) ::= PIPE(L) cparams(P) PIPE expr(B). [LOWEST]     { A = bxc_b_closure(ps, L, &P, NULL, B); }
expr(A) ::= PIPE(L) cparams(P) PIPE ARROW ty(T) block(B). { A = bxc_b_closure(ps, L, &P, T, bxc_b_block_expr(ps, B)); }
expr(A) ::= OROR(L) expr(B). [LOWEST]                     { A = bxc_b_closure(ps, L, NULL, NULL, B); }

cparams(A) ::= cparam(X).                                 { memset(&A, 0, sizeof A); BXC_LIST_PUSH(ps->arena, &A, X); }
cparams(A) ::= cparams(B) COMMA cparam(X).                { A = B; BXC_LIST_PUSH(ps->arena, &A, X); }
cparam(A) ::= pat(P).                                     { A = bxc_b_param(ps, NULL, P, NULL); }
cparam(A) ::= pat(P) COLON ty(T).                         { A = bxc_b_param(ps, NULL, P, T); }

call_args(A) ::= .                                        { memset(&A, 0, sizeof A); }
call_args(A) ::= expr_list1(B) opt_comma.                 { A = B; }
expr_list1(A) ::= expr(X).                                { memset(&A, 0, sizeof A); BXC_LIST_PUSH(ps->arena, &A, X); }
expr_list1(A) ::= expr_list1(B) COMMA expr(X).            { A = B; BXC_LIST_PUSH(ps->arena, &A, X); }

field_inits(A) ::= .                                      { memset(&A, 0, sizeof A); }
field_inits(A) ::= field_inits1(B) opt_comma.             { A = B; }
field_inits1(A) ::= field_init(X).                        { memset(&A, 0, sizeof A); BXC_LIST_PUSH(ps->arena, &A, X); }
field_inits1(A) ::= field_inits1(B) COMMA field_init(X).  { A = B; BXC_LIST_PUSH(ps->arena, &A, X); }
field_init(A) ::= IDENT(N) COLON expr(X).                 { A = bxc_b_field_init(ps, N, X); }
field_init(A) ::= IDENT(N).                               { A = bxc_b_field_init(ps, N, NULL); }

%code {
/* The driver's view of the Lemon parser: which terminals could come next
 * (for "expected X, found Y").  Simulates the automaton on a copy of the
 * state stack, following reductions until a shift or an error. */
static bool bxc_lemon_accepts(const YYACTIONTYPE *states, int nstates, int tok) {
    YYACTIONTYPE stk[YYSTACKDEPTH + 2];
    int top = nstates - 1;
    if (top < 0 || top >= YYSTACKDEPTH) return false;
    memcpy(stk, states, (size_t)nstates * sizeof stk[0]);
    YYACTIONTYPE act = stk[top];
    for (int guard = 0; guard < 100000; guard++) {
        act = yy_find_shift_action((YYCODETYPE)tok, act);
        if (act >= YY_MIN_REDUCE) {
            unsigned rule = act - YY_MIN_REDUCE;
            int base = top + yyRuleInfoNRhs[rule];
            if (base < 0 || base + 1 > YYSTACKDEPTH) return false;
            act = yy_find_reduce_action(stk[base], (YYCODETYPE)yyRuleInfoLhs[rule]);
            top = base + 1;
            stk[top] = act;
        } else if (act <= YY_MAX_SHIFTREDUCE || act == YY_ACCEPT_ACTION) {
            return true;
        } else {
            return false;
        }
    }
    return false;
}

/* The state stack as it was before the current token: Lemon performs
 * default reductions before it detects an error, which would hide tokens
 * that were acceptable right after the previous token (`,` in a field
 * list, say).  The driver snapshots the top BXC_SNAP_WINDOW states before
 * feeding each token (copying the whole stack per token would be quadratic
 * on deep input).  Entries below the window are still intact at the error
 * unless the reductions popped below it: they then leave the stack short
 * (a reduction pushes one entry, and only a few empty rules can follow),
 * which is detected, and the current stack is used instead. */
static void bxc_ps_syntax_error(bxc_pstate *ps, yyParser *p, int major, bxc_span span) {
    int expected[YYNTOKEN];
    int n = 0;
    YYACTIONTYPE states[YYSTACKDEPTH + 2];
    int cur = (int)(p->yytos - p->yystack) + 1;
    int nstates = cur;
    for (int i = 0; i < cur; i++) states[i] = p->yystack[i].stateno;
    if (ps->nsnap > 0 && (ps->snap_from == 0 || cur >= ps->snap_from + 16)) {
        const yyStackEntry *snap = (const yyStackEntry *)(const void *)ps->snap;
        for (int i = ps->snap_from; i < ps->nsnap; i++)
            states[i] = snap[i - ps->snap_from].stateno;
        nstates = ps->nsnap;
    }
    for (int t = 1; t < YYNTOKEN; t++)
        if (bxc_lemon_accepts(states, nstates, t)) expected[n++] = t;
    bxc_ps_report(ps, major, span, expected, n);
}

void bxc_lemon_snapshot(void *parser, bxc_pstate *ps) {
    const yyParser *p = parser;
    int n = (int)(p->yytos - p->yystack) + 1;
    int from = n > BXC_SNAP_WINDOW ? n - BXC_SNAP_WINDOW : 0;
    memcpy(ps->snap, &p->yystack[from], (size_t)(n - from) * sizeof(yyStackEntry));
    ps->snap_from = from;
    ps->nsnap = n;
}

_Static_assert(sizeof(yyStackEntry) <= BXC_SNAP_ENTRY_MAX, "parse_int.h sizes the snapshot by entry");
_Static_assert(_Alignof(yyStackEntry) <= 16, "the snapshot buffer is 16-byte aligned");

int bxc_lemon_stack_max(void) { return YYSTACKDEPTH + 2; }
_Static_assert(sizeof(YYACTIONTYPE) == sizeof(unsigned short),
               "parse_int.h stores state numbers as unsigned short");

/* Entry points for parse.c, which cannot see the generated types. */
int bxc_lemon_token_count(void) { return YYNTOKEN; }
}
