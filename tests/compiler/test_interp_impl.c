/* test_interp_impl.c — methods and associated fns of inherent `impl`
 * blocks in the metadata interpreter (language.md §4, §7): calls through
 * values, `Type::f(..)`, `Self`, receivers as copies, calls from helper fns,
 * field expressions, `meta` callables and scalar encodings, the usual
 * limits, and `:scalars` (bxi_scalars / bxi_scalars_call).  The unit is
 * checked first, so the checker accepts every declaration used here. */
#include "test_interp_harness.h"

static const char *EXT =
    "#[fusion(scalar)]\n"
    "type Amount = f32;\n"
    "#[fusion(scalar)]\n"
    "pub enum Level { Low, Mid, High }\n"
    "#[fusion(scalar)]\n"
    "pub struct Wrapped { code: i32 }\n"
    "pub enum Strategy { Fast, Accurate }\n"
    "impl Strategy {\n"
    "    fn to_code(&self) -> u32 { if *self == Strategy::Fast { 0 } else { 1 } }\n"
    "    fn by_value(self) -> u32 { self.to_code() + 10 }\n"
    "    fn fastest() -> Self { Self::Fast }\n"
    "    fn pick(exact: bool) -> Strategy { if exact { Strategy::Accurate } else { Self::fastest() } }\n"
    "}\n"
    "pub struct Counter { n: u64 }\n"
    "impl Counter {\n"
    "    fn new(n: u64) -> Self { Self { n: n } }\n"
    "    fn bumped(&self) -> Counter { let mut c = Counter { n: self.n }; c.n += 1; c }\n"
    "    fn get(&self) -> u64 { self.n }\n"
    "    fn down(&self) -> u64 { if self.n == 0 { 0 } else { Counter::new(self.n - 1).down() } }\n"
    "    fn spin(&self) -> u64 { let mut i: u64 = 0; while true { i += 1; } i }\n"
    "    fn boom(&self) -> u64 { panic(\"boom\") }\n"
    "}\n"
    "pub struct Grid { rows: usize, cols: usize }\n"
    "impl Grid {\n"
    "    fn shape(&self) -> Shape { [self.rows, self.cols] }\n"
    "}\n"
    "fn helper(s: &Strategy) -> u32 { s.to_code() * 100 }\n"
    "fn grid_meta(x: &TensorSpec, g: &Grid) -> TensorSpec { TensorSpec::new(g.shape(), x.dtype) }\n"
    "#[backend_extension(Flex, Fusion)]\n"
    "pub trait Ops: Backend {\n"
    "    #[fusion(dtype = x, shape = x)]\n"
    "    fn blend(x: FloatTensor, #[fusion(scalar = strategy.to_code())] strategy: Strategy) -> FloatTensor;\n"
    "    #[fusion(dtype = x, shape = x)]\n"
    "    fn mixed(x: FloatTensor, k: u32, #[fusion(scalar = s.by_value() + k)] s: Strategy, w: f64,\n"
    "             a: Amount, #[fusion(scalar)] lv: Level, wr: Wrapped, g: Grid, on: bool) -> FloatTensor;\n"
    "    #[fusion(dtype = x, shape = g.shape())]\n"
    "    fn regrid(x: FloatTensor, g: Grid) -> FloatTensor;\n"
    "    #[fusion(meta = grid_meta)]\n"
    "    fn regrid2(x: FloatTensor, g: Grid) -> FloatTensor;\n"
    "    #[fusion(dtype = x, shape = x)]\n"
    "    fn failing(x: FloatTensor, #[fusion(scalar = c.boom())] c: Counter) -> FloatTensor;\n"
    "    #[fusion(dtype = x, shape = x)]\n"
    "    fn sized(x: FloatTensor, #[fusion(scalar = x.shape.num_elements() * g.rows)] g: Grid) -> FloatTensor;\n"
    "}\n";

static harness h;
static void setup(void) { h_init_checked(&h, EXT); }
static void teardown(void) { h_fini(&h); }

TestSuite(interp_impl, .init = setup, .fini = teardown);

/* `:scalars CALL` as the REPL prints it: `name = value (kind)` lines, or
 * the diagnostics. */
static char *h_scalars(harness *hh, const char *call)
{
    char *out = NULL;
    bxc_file *f = h_parse(hh, call, &out);
    if (!f)
        return out;
    cr_assert(f->repl && f->repl->tail, "`%s` is not an expression", call);
    bxi_scalar *sc;
    uint32_t n;
    if (!bxi_scalars_call(hh->in, f->repl->tail, 0, &hh->env, &sc, &n))
        return h_diags(hh);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    for (uint32_t i = 0; i < n; i++) {
        char *v = h_value_text(&sc[i].value);
        fprintf(m, "%s%s = %s (%s)", i ? "; " : "", sc[i].name, v, bxc_scalar_kind_name(sc[i].kind));
        free(v);
    }
    fclose(m);
    return buf;
}

#define EXPECT_SCALARS(line, want)                                                    \
    do {                                                                              \
        char *got_ = h_scalars(&h, (line));                                           \
        cr_expect_str_eq(got_, (want), "`%s`", (line));                               \
        free(got_);                                                                   \
    } while (0)

Test(interp_impl, methods_and_associated_fns)
{
    EXPECT_VALUE(&h, "Strategy::Fast.to_code()", "0");
    EXPECT_VALUE(&h, "Strategy::Accurate.to_code()", "1");
    EXPECT_VALUE(&h, "let s = Strategy::Accurate; let r = &s; r.to_code()", "1");  /* auto-deref */
    EXPECT_VALUE(&h, "Strategy::Accurate.by_value()", "11");
    EXPECT_VALUE(&h, "Strategy::fastest()", "Fast");
    EXPECT_VALUE(&h, "Strategy::pick(false).to_code() + Strategy::pick(true).to_code()", "1");
    /* a method called as an associated fn takes its receiver first */
    EXPECT_VALUE(&h, "Strategy::to_code(&Strategy::Accurate)", "1");
    EXPECT_VALUE(&h, "Counter::new(4).bumped().bumped().get()", "6");
    EXPECT_VALUE(&h, "Grid { rows: 2, cols: 5 }.shape()", "[2, 5]");
    EXPECT_VALUE(&h, "helper(&Strategy::Accurate)", "100");
}

Test(interp_impl, receiver_is_a_copy)
{
    /* `bumped` mutates its own copy; the caller's value is unchanged */
    EXPECT_VALUE(&h, "let c = Counter::new(1)", "");
    EXPECT_VALUE(&h, "c.bumped().get()", "2");
    EXPECT_VALUE(&h, "c.get()", "1");
}

Test(interp_impl, methods_typed_at_the_prompt)
{
    EXPECT_VALUE(&h, "impl Counter { fn twice(&self) -> u64 { self.get() * 2 } }", "");
    EXPECT_VALUE(&h, "Counter::new(21).twice()", "42");
}

Test(interp_impl, errors_are_located_and_limits_hold)
{
    EXPECT_ERROR(&h, "Counter::new(3).boom()", "test.bext:21:29: error[E1007]: panic: boom", "Counter::boom");
    EXPECT_ERROR(&h, "Counter::new(100000).down()", "error[E1005]: recursion limit reached", "Counter::down");
    bxi_set_limits(h.in, (bxi_limits){.max_steps = 5000});
    EXPECT_ERROR(&h, "Counter::new(0).spin()", "error[E1006]: evaluation exceeded its budget of 5000 steps");
    EXPECT_ERROR(&h, "Counter::new(0).nope()", "<repl>:1:17: error[E1009]: no method `nope`");
    EXPECT_ERROR(&h, "Strategy::Fast.fastest()", "is an associated function, not a method");
    EXPECT_ERROR(&h, "Counter::new(1, 2)", "error[E1012]: `new` takes 1 argument but 2 were given");
}

Test(interp_impl, field_expressions_and_meta_callables)
{
    EXPECT_VALUE(&h, "let x = TensorSpec::new([2, 3], DType::F32)", "");
    char *got = h_meta(&h, "Ops::regrid(x, Grid { rows: 7, cols: 1 })");
    cr_expect_str_eq(got, "TensorSpec { shape: [7, 1], dtype: F32 }");
    free(got);
    got = h_meta(&h, "Ops::regrid2(x, Grid { rows: 4, cols: 4 })");
    cr_expect_str_eq(got, "TensorSpec { shape: [4, 4], dtype: F32 }");
    free(got);
}

Test(interp_impl, scalars_in_declaration_order)
{
    EXPECT_VALUE(&h, "let x = TensorSpec::new([2, 3], DType::F32)", "");
    EXPECT_SCALARS("Ops::blend(x, Strategy::Fast)", "strategy = 0 (custom)");
    EXPECT_SCALARS("Ops::blend(x, Strategy::Accurate)", "strategy = 1 (custom)");
    /* inferred (u32, f64, bool), custom, marked alias / enum / struct;
     * a plain struct without a marking is not a scalar */
    EXPECT_SCALARS("Ops::mixed(x, 5, Strategy::Accurate, 0.25, 1.5, Level::High, Wrapped { code: -3 },"
                   " Grid { rows: 1, cols: 1 }, false)",
                   "k = 5 (inferred); s = 16 (custom); w = 0.25 (inferred); a = 1.5 (marked); "
                   "lv = 2 (marked); wr = -3 (marked); on = false (inferred)");
    EXPECT_SCALARS("Ops::regrid(x, Grid { rows: 1, cols: 1 })", "");
    /* an encoding sees a tensor argument as its whole TensorSpec, as the
     * checker types it (field expressions see a DType or a Shape) */
    EXPECT_SCALARS("Ops::sized(x, Grid { rows: 3, cols: 1 })", "g = 18 (custom)");
}

Test(interp_impl, scalar_errors)
{
    EXPECT_VALUE(&h, "let x = TensorSpec::new([2, 3], DType::F32)", "");
    char *got = h_scalars(&h, "Ops::failing(x, Counter::new(1))");
    cr_expect(strstr(got, "error[E1007]: panic: boom") != NULL, "%s", got);
    cr_expect(strstr(got, "Counter::boom") != NULL, "%s", got);
    free(got);
    got = h_scalars(&h, "Ops::blend(x)");
    cr_expect(strstr(got, "<repl>:1:1: error[E1012]: `Ops::blend` takes 2 arguments but 1 was given") != NULL, "%s", got);
    free(got);
    got = h_scalars(&h, "Ops::nothing(x)");
    cr_expect(strstr(got, "trait `Ops` has no method `nothing`") != NULL, "%s", got);
    free(got);

    /* the API without the REPL: values straight from C */
    bxi_scalar *sc;
    uint32_t n;
    BxvShape shp = {0};
    BxvValue args[2];
    args[0] = bxv_spec(&h.darena, &shp, BXV_DT_F32);
    args[1] = (BxvValue){.kind = BXV_ENUM};
    args[1].u.agg.type = "Strategy";
    args[1].u.agg.variant = "Accurate";
    cr_assert(bxi_scalars(h.in, "Ops", "blend", args, 2, &sc, &n));
    cr_assert_eq(n, 1);
    cr_expect_str_eq(sc[0].name, "strategy");
    cr_expect_eq(sc[0].kind, BXC_SCALAR_CUSTOM);
    cr_expect_eq(sc[0].value.kind, BXV_INT);
    cr_expect(sc[0].value.u.i.v == 1);
}
