/* test_interp.c — the metadata interpreter (language.md §5, §7): values and
 * their printing, checked integer arithmetic with located errors, shapes,
 * dtypes, specs, control flow, helper fns, limits, :meta, and the bounded
 * memory of REPL bindings.  Lines are parsed by the real parser and run by
 * the interpreter through test_interp_harness.h. */
#include "test_interp_harness.h"

/* The §1 example of language.md plus the `counted` example of §5. */
static const char *EXT =
    "#[derive(ExtensionType)]\n"
    "#[extension_type(fusion)]\n"
    "pub struct Counted {\n"
    "    tensor: FloatTensor,\n"
    "    count: usize,\n"
    "}\n"
    "#[derive(ExtensionType)]\n"
    "#[extension_type(fusion)]\n"
    "pub enum Packet {\n"
    "    Empty,\n"
    "    Float { tensor: FloatTensor, mode: u32 },\n"
    "    Twin(u8, bool),\n"
    "}\n"
    "#[derive(ExtensionType)]\n"
    "#[extension_type(fusion)]\n"
    "pub struct Inner { integer: IntTensor, mask: BoolTensor }\n"
    "struct Pair(u8, bool);\n"
    "struct Marker;\n"
    "fn joined_shape(lhs: &Shape, rhs: &Shape, axis: &usize) -> Shape {\n"
    "    let mut shape = lhs.clone();\n"
    "    shape[*axis] += rhs[*axis];\n"
    "    shape\n"
    "}\n"
    "fn fact(n: u64) -> u64 { if n == 0 { 1 } else { n * fact(n - 1) } }\n"
    "fn forever(n: u64) -> u64 { forever(n + 1) }\n"
    "fn first_big(s: &Shape) -> usize {\n"
    "    for i in 0..s.len() { if s[i] > 100 { return i; } }\n"
    "    s.len()\n"
    "}\n"
    "fn pair_meta(a: &TensorSpec, b: &TensorSpec) -> (TensorSpec, TensorSpec) {\n"
    "    (b.clone(), a.clone())\n"
    "}\n"
    "#[backend_extension(Flex, Fusion)]\n"
    "pub trait MyExtension: Backend {\n"
    "    #[fusion(dtype = input, shape = {\n"
    "        let mut shape = input.clone();\n"
    "        shape.swap(0, 1);\n"
    "        shape\n"
    "    })]\n"
    "    fn transpose_2d(input: FloatTensor<Self>) -> FloatTensor<Self>;\n"
    "    #[fusion(meta = |input| CountedMetadata {\n"
    "        tensor: input.clone(),\n"
    "        count: input.shape.num_elements(),\n"
    "    })]\n"
    "    fn counted(input: FloatTensor<Self>) -> Counted<Self>;\n"
    "    #[fusion(meta = pair_meta)]\n"
    "    fn swap_pair(a: FloatTensor<Self>, b: FloatTensor<Self>) -> (FloatTensor<Self>, FloatTensor<Self>);\n"
    "    #[fusion(dtype = lhs, shape = joined_shape(lhs, rhs, axis))]\n"
    "    fn join(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>, axis: usize) -> FloatTensor<Self>;\n"
    "    #[fusion(default)]\n"
    "    fn gelu(x: FloatTensor<Self>) -> FloatTensor<Self> { x.erf() * 0.5 }\n"
    "    #[fusion(dtype = x, shape = extra.mask.shape)]\n"
    "    fn masked(x: FloatTensor<Self>, extra: Inner) -> FloatTensor<Self>;\n"
    "    #[fusion(meta = |x, n| TensorSpec::new([*n as usize, x.shape[0]], x.dtype))]\n"
    "    fn repeat(x: FloatTensor<Self>, n: u32) -> FloatTensor<Self>;\n"
    "}\n";

static harness h;
static void setup(void) { h_init_checked(&h, EXT); }
static void teardown(void) { h_fini(&h); }

TestSuite(interp, .init = setup, .fini = teardown);

static char infer_log[256];

static bool passthrough_infer(const char *op, const bext_spec *in, int n_in, bext_op_args *args, bext_spec *out,
                              const char **error)
{
    (void)n_in;
    (void)args;
    (void)error;
    strncat(infer_log, op, sizeof infer_log - strlen(infer_log) - 2);
    strcat(infer_log, " ");
    *out = in[0];
    return true;
}

Test(interp, literals_and_printing)
{
    EXPECT_VALUE(&h, "1 + 2 * 3", "7");
    EXPECT_VALUE(&h, "(1, true, DType::BF16)", "(1, true, BF16)");
    EXPECT_VALUE(&h, "(5,)", "(5,)");
    EXPECT_VALUE(&h, "[6, 3]", "[6, 3]");
    EXPECT_VALUE(&h, "TensorSpec::new([3, 2], DType::F32)", "TensorSpec { shape: [3, 2], dtype: F32 }");
    EXPECT_VALUE(&h, "1.5 + 2.0", "3.5");
    EXPECT_VALUE(&h, "2.0", "2.0");
    EXPECT_VALUE(&h, "0.1 + 0.2", "0.30000000000000004");
    /* Rust's Debug switches to scientific outside 1e-4 <= |v| < 1e16. */
    EXPECT_VALUE(&h, "(100000000000000000000.0, 0.00001, 0.0001, -0.0)", "(1e20, 1e-5, 0.0001, -0.0)");
    /* f32 rounds at every step, so 0.1 + 0.2 is exactly the f32 nearest 0.3. */
    EXPECT_VALUE(&h, "let a: f32 = 0.1; let b: f32 = 0.2; a + b", "0.3");
    EXPECT_VALUE(&h, "7 / 2", "3");
    EXPECT_VALUE(&h, "-7 % 3", "-1");
    EXPECT_VALUE(&h, "!(3 < 2) && 2 >= 2", "true");
}

Test(interp, integer_literals_adopt_the_other_type)
{
    EXPECT_VALUE(&h, "let n: u8 = 250; n + 5", "255");
    EXPECT_ERROR(&h, "let n: u8 = 250; n + 6", "<repl>:1:18: error[E1001]: attempt to add with overflow",
                 "does not fit in `u8`");
    EXPECT_ERROR(&h, "let a: u32 = 1; let b: usize = 2; a + b", "<repl>:1:35: error[E1008]: mismatched integer types",
                 "help: convert one side with `as`");
    EXPECT_ERROR(&h, "let z: u16 = 70000", "<repl>:1:14: error[E1001]: value 70000 does not fit in `u16`");
}

Test(interp, checked_arithmetic_errors_are_located)
{
    EXPECT_ERROR(&h, "let a: u32 = 7; a / 0", "<repl>:1:17: error[E1002]: attempt to divide `7` by zero");
    EXPECT_ERROR(&h, "let a: i64 = 7; a % 0", "<repl>:1:17: error[E1002]: attempt to take the remainder of `7` by zero");
    EXPECT_ERROR(&h, "let n: usize = 0; n - 1", "<repl>:1:19: error[E1001]: attempt to subtract with overflow",
                 "negative");
    EXPECT_ERROR(&h, "let m: i64 = -9223372036854775807 - 1; m / -1",
                 "<repl>:1:40: error[E1001]: attempt to divide with overflow");
    EXPECT_ERROR(&h, "let u: usize = -1", "<repl>:1:16: error[E1004]: negative value -1 cannot be a `usize`");
    EXPECT_ERROR(&h, "let k: u32 = 3; -k", "<repl>:1:17: error[E1004]: cannot negate a value of unsigned type `u32`");
    EXPECT_ERROR(&h, "let s = [2, 3]; s[5]", "<repl>:1:17: error[E1003]: index 5 is out of range for a shape of rank 2");
    EXPECT_ERROR(&h, "let s = [2, 3]; s[-1]", "<repl>:1:19: error[E1004]: an index is negative");
    EXPECT_ERROR(&h, "let mut s = [2, 3]; s[2] = 1", "<repl>:1:21: error[E1003]: index 2 is out of range");
}

Test(interp, casts_are_checked)
{
    EXPECT_VALUE(&h, "3.7 as u32", "3");
    EXPECT_VALUE(&h, "-3.7 as i32", "-3");
    EXPECT_VALUE(&h, "let n: u32 = 7; n as f32 / 2.0", "3.5");
    EXPECT_VALUE(&h, "true as u8", "1");
    EXPECT_ERROR(&h, "300 as u8", "<repl>:1:1: error[E1001]: value 300 does not fit in `u8`");
    EXPECT_ERROR(&h, "let x: i32 = -1; x as usize", "<repl>:1:18: error[E1004]: negative value -1 cannot be cast to `usize`");
}

Test(interp, shapes)
{
    EXPECT_VALUE(&h, "let mut s = Shape::new(); s.push(2); s.push(3); s.insert(0, 4); s.swap(0, 2); s", "[3, 2, 4]");
    EXPECT_VALUE(&h, "s.len()", "3");
    EXPECT_VALUE(&h, "s.num_elements()", "24");
    EXPECT_VALUE(&h, "s.remove(1)", "2");
    EXPECT_VALUE(&h, "s", "[3, 4]");
    EXPECT_VALUE(&h, "s.pop()", "4");
    EXPECT_VALUE(&h, "s[0] *= 5; s", "[15]");
    /* Value semantics: a copy is not affected by mutating the original. */
    EXPECT_VALUE(&h, "let t = s.clone(); s.push(9); (s, t)", "([15, 9], [15])");
    EXPECT_ERROR(&h, "let e = Shape::new(); e.pop()", "not declared `mut`");
    EXPECT_ERROR(&h, "let mut e = Shape::new(); e.pop()", "<repl>:1:27: error[E1003]: `pop` on an empty shape");
    EXPECT_ERROR(&h, "s.swap(0, 7)", "<repl>:1:11: error[E1003]: index 7 is out of range for a shape of rank 2");
    EXPECT_ERROR(&h, "[1, 2][0].push(3)", "error[E1009]: `push` is a method of `Shape` only");
    EXPECT_ERROR(&h, "[4294967296, 4294967296, 4294967296].num_elements()",
                 "<repl>:1:1: error[E1001]: the number of elements overflows `usize`");
}

/* Generated code holds a shape in at most 32 dims (gen.h BEXT_SHAPE_CAP);
 * the interpreter caps shapes at the same rank with the same located
 * error, so both give the same results and errors. */
Test(interp, shapes_are_capped_at_32_dims)
{
    char lit[256] = "[", *p = lit + 1;
    for (int i = 0; i < 32; i++)
        p += sprintf(p, "%s1", i ? ", " : "");
    strcpy(p, "]");
    char line[512];
    snprintf(line, sizeof line, "let mut full = %s; full.len()", lit);
    EXPECT_VALUE(&h, line, "32");
    EXPECT_ERROR(&h, "full.push(1)", "<repl>:1:1: error[E1003]: a shape has at most 32 dimensions in generated code");
    EXPECT_ERROR(&h, "full.insert(0, 1)", "<repl>:1:1: error[E1003]: a shape has at most 32 dimensions");
    /* the failed calls left the shape as it was */
    EXPECT_VALUE(&h, "full.len()", "32");
    /* a 33-dim literal fails at its 33rd dim (column 2 + 3 * 32) */
    lit[strlen(lit) - 1] = '\0';
    snprintf(line, sizeof line, "%s, 1]", lit);
    EXPECT_ERROR(&h, line, "<repl>:1:98: error[E1003]: a shape has at most 32 dimensions");
    EXPECT_ERROR(&h, "let mut s = Shape::new(); for i in 0..40 { s.push(i); } s.len()",
                 "<repl>:1:44: error[E1003]: a shape has at most 32 dimensions");
}

Test(interp, dtypes_and_specs)
{
    EXPECT_VALUE(&h, "DType::BF16.size()", "2");
    EXPECT_VALUE(&h, "(DType::F16.is_float(), DType::I32.is_int(), DType::Bool.is_bool(), DType::U8.is_float())",
                 "(true, true, true, false)");
    EXPECT_VALUE(&h, "let x = TensorSpec::new([2, 3], DType::F32); x.shape", "[2, 3]");
    EXPECT_VALUE(&h, "x.dtype", "F32");
    EXPECT_VALUE(&h, "let mut y = x.clone(); y.shape.push(4); y.dtype = DType::I64; (x, y)",
                 "(TensorSpec { shape: [2, 3], dtype: F32 }, TensorSpec { shape: [2, 3, 4], dtype: I64 })");
    EXPECT_ERROR(&h, "DType::F8", "<repl>:1:8: error[E1009]: `DType` has no variant `F8`");
    EXPECT_ERROR(&h, "TensorSpec::new(DType::F32, [1])", "<repl>:1:17: error[E1008]: expected `Shape`, found `DType`");
}

Test(interp, control_flow)
{
    EXPECT_VALUE(&h, "let mut t = 0; for i in 0..5 { t += i; } t", "10");
    EXPECT_VALUE(&h, "let mut t = 0; for i in 1..=4 { t *= 1; t += i; } t", "10");
    EXPECT_VALUE(&h, "let mut i = 0; let s = [4, 5, 6]; while i < s.len() { i += 1; } i", "3");
    EXPECT_VALUE(&h, "let mut n = 0; loop { n += 1; if n == 7 { break; } } n", "7");
    EXPECT_VALUE(&h, "if 2 > 3 { 1 } else if 2 > 1 { 2 } else { 3 }", "2");
    EXPECT_VALUE(&h, "let (a, mut b) = (1, 2); b += a; b", "3");
    EXPECT_VALUE(&h, "let r = &5; *r + 1", "6");
    EXPECT_ERROR(&h, "let q = 5; *q", "<repl>:1:12: error[E1008]: `{integer}` is not a reference");
    EXPECT_ERROR(&h, "let x = 1; x = 2", "<repl>:1:12: error[E1008]: cannot assign to or mutate `x`: it is not declared `mut`");
    EXPECT_ERROR(&h, "if 1 { 2 }", "<repl>:1:4: error[E1008]: a condition must be a `bool`, found `{integer}`");
    EXPECT_ERROR(&h, "nope + 1", "<repl>:1:1: error[E1009]: cannot find value `nope`");
}

Test(interp, helper_fns)
{
    EXPECT_VALUE(&h, "let x = TensorSpec::new([2, 3], DType::F32); joined_shape(&x.shape, &[4, 3], &0)", "[6, 3]");
    EXPECT_VALUE(&h, "fact(20)", "2432902008176640000");
    EXPECT_VALUE(&h, "first_big(&[1, 500, 2])", "1");
    EXPECT_VALUE(&h, "first_big(&[1, 2])", "2");
    /* The overflow happens inside `fact`: located there, with the calls. */
    EXPECT_ERROR(&h, "fact(21)", "test.bext:24:49: error[E1001]: attempt to multiply with overflow",
                 "note: in this call to `fact`", "<repl>:1:1: note: in this call to `fact`");
    EXPECT_ERROR(&h, "joined_shape(&[1], &[2], &3)", "test.bext:21:21: error[E1003]: index 3 is out of range",
                 "<repl>:1:1: note: in this call to `joined_shape`");
    EXPECT_ERROR(&h, "fact(1, 2)", "<repl>:1:1: error[E1012]: `fact` takes 1 argument but 2 were given");
    EXPECT_ERROR(&h, "fact(-1)", "error[E1004]: negative value -1 cannot be a `u64`");
    /* fns typed at the prompt */
    EXPECT_VALUE(&h, "fn twice(n: usize) -> usize { n * 2 }", "");
    EXPECT_VALUE(&h, "twice(21)", "42");
}

Test(interp, limits_stop_runaway_code)
{
    EXPECT_ERROR(&h, "forever(0)", "test.bext:25:29: error[E1005]: recursion limit reached", "... and");
    bxi_set_limits(h.in, (bxi_limits){.max_call_depth = 64, .max_steps = 5000});
    EXPECT_ERROR(&h, "let mut i = 0; while true { i += 1; }",
                 "<repl>:1:22: error[E1006]: evaluation exceeded its budget of 5000 steps");
    EXPECT_ERROR(&h, "loop { }", "<repl>:1:1: error[E1006]: evaluation exceeded its budget");
    /* The C stack is measured: a small budget stops deep nesting cleanly. */
    bxi_set_limits(h.in, (bxi_limits){.max_stack_bytes = 32 << 10});
    char deep[2048] = "";
    for (int i = 0; i < 200; i++)
        strcat(deep, "(");
    strcat(deep, "1");
    for (int i = 0; i < 200; i++)
        strcat(deep, " + 1)");
    EXPECT_ERROR(&h, deep, "error[E1005]: evaluation nested too deeply (more than 32 KiB of stack)");
    EXPECT_VALUE(&h, "(1 + 2) * 3", "9");
}

Test(interp, structs_enums_and_metadata_companions)
{
    EXPECT_VALUE(&h, "CountedMetadata { count: 6, tensor: TensorSpec::new([2, 3], DType::F32) }",
                 "CountedMetadata { tensor: TensorSpec { shape: [2, 3], dtype: F32 }, count: 6 }");
    EXPECT_VALUE(&h, "PacketMetadata::Float { tensor: TensorSpec::new([1], DType::F16), mode: 3 }",
                 "Float { tensor: TensorSpec { shape: [1], dtype: F16 }, mode: 3 }");
    EXPECT_VALUE(&h, "PacketMetadata::Empty", "Empty");
    EXPECT_VALUE(&h, "(PacketMetadata::Twin(3, true), PacketMetadata::Twin(4, false).0)", "(Twin(3, true), 4)");
    EXPECT_ERROR(&h, "PacketMetadata::Twin(3)", "<repl>:1:1: error[E1012]: variant `Twin` takes 2 positional fields but 1 was given");
    EXPECT_ERROR(&h, "PacketMetadata::Twin(300, true)", "<repl>:1:22: error[E1001]: value 300 does not fit in `u8`");
    EXPECT_VALUE(&h, "let c = CountedMetadata { tensor: TensorSpec::new([2], DType::F32), count: 2 }; c.count + 1", "3");
    EXPECT_ERROR(&h, "CountedMetadata { tensor: TensorSpec::new([2], DType::F32) }",
                 "<repl>:1:1: error[E1009]: missing field `count`");
    EXPECT_ERROR(&h, "PacketMetadata::Float { tensor: TensorSpec::new([1], DType::F16), mode: -3 }",
                 "error[E1004]: negative value -3 cannot be a `u32`");
    EXPECT_VALUE(&h, "(Pair(7, true), Marker)", "(Pair(7, true), Marker)");
    EXPECT_VALUE(&h, "let p = Pair(1, false); p.0 + 1", "2");
    EXPECT_ERROR(&h, "Pair(256, true)", "<repl>:1:6: error[E1001]: value 256 does not fit in `u8`");
    EXPECT_ERROR(&h, "Nowhere { a: 1 }", "<repl>:1:1: error[E1009]: cannot find struct `Nowhere`");
    EXPECT_ERROR(&h, "PacketMetadata::Round", "<repl>:1:1: error[E1009]: enum `PacketMetadata` has no variant `Round`");
}

Test(interp, meta_field_expressions)
{
    char *got;
    EXPECT_VALUE(&h, "let x = TensorSpec::new([2, 3], DType::F32)", "");
    got = h_meta(&h, "MyExtension::transpose_2d(x)");
    cr_expect_str_eq(got, "TensorSpec { shape: [3, 2], dtype: F32 }");
    free(got);
    got = h_meta(&h, "MyExtension::join(x, TensorSpec::new([5, 3], DType::F32), 0)");
    cr_expect_str_eq(got, "TensorSpec { shape: [7, 3], dtype: F32 }");
    free(got);
    /* The error is in the annotation's expression, reached through the helper. */
    got = h_meta(&h, "MyExtension::join(x, x, 9)");
    cr_expect(strstr(got, "test.bext:21:21: error[E1003]: index 9 is out of range") != NULL, "%s", got);
    free(got);
    got = h_meta(&h, "MyExtension::transpose_2d([2, 3])");
    cr_expect(strstr(got, "<repl>:1:1: error[E1011]: argument `input` is a tensor: pass a `TensorSpec`") != NULL, "%s", got);
    free(got);
    got = h_meta(&h, "MyExtension::transpose_2d(x, x)");
    cr_expect(strstr(got, "takes 1 argument but 2 were given") != NULL, "%s", got);
    free(got);
    got = h_meta(&h, "MyExtension::nothing(x)");
    cr_expect(strstr(got, "error[E1009]: trait `MyExtension` has no method `nothing`") != NULL, "%s", got);
    free(got);
}

Test(interp, meta_callables_and_default)
{
    char *got;
    EXPECT_VALUE(&h, "let x = TensorSpec::new([2, 3], DType::F32)", "");
    got = h_meta(&h, "MyExtension::counted(x)");
    cr_expect_str_eq(got, "CountedMetadata { tensor: TensorSpec { shape: [2, 3], dtype: F32 }, count: 6 }");
    free(got);
    got = h_meta(&h, "MyExtension::swap_pair(x, TensorSpec::new([1], DType::I64))");
    cr_expect_str_eq(got, "(TensorSpec { shape: [1], dtype: I64 }, TensorSpec { shape: [2, 3], dtype: F32 })");
    free(got);
    /* An extension argument is its metadata; ordinary ones arrive as &T. */
    got = h_meta(&h, "MyExtension::masked(x, InnerMetadata { integer: x, mask: TensorSpec::new([7], DType::Bool) })");
    cr_expect_str_eq(got, "TensorSpec { shape: [7], dtype: F32 }");
    free(got);
    got = h_meta(&h, "MyExtension::masked(x, x)");
    cr_expect(strstr(got, "<repl>:1:1: error[E1011]: argument `extra` is an extension value: pass a `InnerMetadata`") != NULL,
              "%s", got);
    free(got);
    got = h_meta(&h, "MyExtension::repeat(x, 4)");
    cr_expect_str_eq(got, "TensorSpec { shape: [4, 2], dtype: F32 }");
    free(got);
    got = h_meta(&h, "MyExtension::repeat(x, -4)");
    cr_expect(strstr(got, "error[E1004]: negative value -4 cannot be a `u32`") != NULL, "%s", got);
    free(got);
    /* A default body runs each op through the inference hook: this one
     * (no runtime linked here) passes the first operand's spec through and
     * records the rows it was asked for. */
    bxi_set_infer(h.in, passthrough_infer);
    infer_log[0] = 0;
    got = h_meta(&h, "MyExtension::gelu(x)");
    cr_expect(strncmp(got, "TensorSpec { shape: [", 21) == 0, "%s", got);
    cr_expect_str_eq(infer_log, "erf mul_scalar ");
    free(got);
    bxi_set_infer(h.in, NULL);
}

/* `:meta` reads the checker's record of the method: an unchecked unit
 * has none, and says so instead of reading the attributes itself. */
Test(interp, meta_needs_the_checker_s_record)
{
    harness u;
    h_init(&u, EXT);
    EXPECT_VALUE(&u, "let x = TensorSpec::new([2, 3], DType::F32)", "");
    char *got = h_meta(&u, "MyExtension::transpose_2d(x)");
    cr_expect(strstr(got, "error[E1011]: `MyExtension::transpose_2d` was not checked") != NULL, "%s", got);
    free(got);
    h_fini(&u);
}

Test(interp, call_fn_entry_point)
{
    BxvValue args[3];
    bxc_arena a;
    bxc_arena_init(&a);
    BxvValue s = bxv_shape_new(&a, 2);
    bxv_shape_push(&a, &s.u.shape, 2);
    bxv_shape_push(&a, &s.u.shape, 3);
    args[0] = s;
    args[1] = s;
    args[2] = bxv_int(1, BXV_ILIT);
    h_program(&h);
    BxvValue out;
    cr_assert(bxi_call_fn(h.in, "joined_shape", args, 3, &out));
    char *txt = h_value_text(&out);
    cr_expect_str_eq(txt, "[2, 6]");
    free(txt);
    cr_expect(!bxi_call_fn(h.in, "no_such_fn", args, 0, &out));
    char *d = h_diags(&h);
    cr_expect(strstr(d, "cannot find function `no_such_fn`") != NULL, "%s", d);
    free(d);
    bxc_arena_free_all(&a);
}

Test(interp, meta_entry_point)
{
    /* bxi_meta, as the code generator's differential test calls it: values
     * built in the caller's arena, not through the parser. */
    bxc_arena a;
    bxc_arena_init(&a);
    BxvValue s = bxv_shape_new(&a, 2);
    bxv_shape_push(&a, &s.u.shape, 4);
    bxv_shape_push(&a, &s.u.shape, 9);
    BxvValue spec = bxv_spec(&a, &s.u.shape, BXV_DT_BF16);
    h_program(&h);
    BxvValue out;
    const char *msg = NULL;
    cr_assert_eq(bxi_meta(h.in, "MyExtension", "transpose_2d", &spec, 1, &out, &msg), BXI_META_VALUE);
    char *txt = h_value_text(&out);
    cr_expect_str_eq(txt, "TensorSpec { shape: [9, 4], dtype: BF16 }");
    free(txt);
    cr_assert_eq(bxi_meta(h.in, "MyExtension", "counted", &spec, 1, &out, &msg), BXI_META_VALUE);
    txt = h_value_text(&out);
    cr_expect_str_eq(txt, "CountedMetadata { tensor: TensorSpec { shape: [4, 9], dtype: BF16 }, count: 36 }");
    free(txt);
    /* A default body runs through the runtime's inference rules, which
     * this program does not link (no bxi_set_infer): a located error says
     * so (the REPL's transcripts test the evaluation itself). */
    cr_expect_eq(bxi_meta(h.in, "MyExtension", "gelu", &spec, 1, &out, &msg), BXI_META_ERROR);
    /* The caller's values are untouched (the interpreter copied them). */
    txt = h_value_text(&spec);
    cr_expect_str_eq(txt, "TensorSpec { shape: [4, 9], dtype: BF16 }");
    free(txt);
    cr_expect_eq(bxi_meta(h.in, "NoTrait", "x", &spec, 1, &out, &msg), BXI_META_ERROR);
    char *d = h_diags(&h);
    cr_expect(strstr(d, "error[E1009]: cannot find trait `NoTrait`") != NULL, "%s", d);
    cr_expect(strstr(d, "needs the runtime's inference rules") != NULL, "%s", d);
    free(d);
    bxc_arena_free_all(&a);
}

Test(interp, bindings_persist_and_stay_bounded)
{
    EXPECT_VALUE(&h, "let mut s = [1, 2]", "");
    EXPECT_VALUE(&h, "s.push(3)", "");
    EXPECT_VALUE(&h, "s", "[1, 2, 3]");
    /* A failing line changes nothing. */
    EXPECT_ERROR(&h, "s.push(4); s[9]", "index 9 is out of range");
    EXPECT_VALUE(&h, "s", "[1, 2, 3]");
    /* Rebinding many times keeps the env's memory bounded (compaction). */
    BxvValue big;
    bxc_arena a;
    bxc_arena_init(&a);
    big = bxv_shape_new(&a, 64);
    for (int i = 0; i < 64; i++)
        bxv_shape_push(&a, &big.u.shape, (uint64_t)i);
    for (int i = 0; i < 50000; i++)
        bxi_env_set(&h.env, i % 2 ? "a" : "b", false, &big);
    cr_expect(h.env.arena.total < (8u << 20), "env arena grew to %zu bytes", h.env.arena.total);
    bxc_arena_free_all(&a);
}
