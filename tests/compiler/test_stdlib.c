/* test_stdlib.c — stdlib/std/shape.bext through the interpreter: right
 * shapes for valid inputs, and for invalid ones a `panic` located on its line
 * in shape.bext with a note at the REPL call that reached it.  The module is
 * found by `use std::shape::{...}` without flags (the module loader) and
 * passes the checker, whose recorded literal types the interpreter uses. */
#include "test_interp_harness.h"

static harness h;

static void setup(void)
{
    h_init_checked(&h, "use std::shape::{broadcast, matmul_shape, reduce_shape, cat_shape, permute_shape, conv2d_shape};\n");
}

static void teardown(void) { h_fini(&h); }

TestSuite(stdlib_shape, .init = setup, .fini = teardown);

/* "shape.bext:LINE:COL: error[E1007]: panic: MSG" for the panic carrying `msg`,
 * with LINE and COL found in the stdlib source (so edits to the file do not
 * break the test, while a wrong location still does). */
static char *panic_location(const char *msg)
{
    char path[1024];
    const char *root = getenv("BEXT_SOURCE_DIR");
    cr_assert(root, "BEXT_SOURCE_DIR is not set (run through ctest)");
    snprintf(path, sizeof path, "%s/stdlib/std/shape.bext", root);
    FILE *f = fopen(path, "r");
    cr_assert(f, "cannot open %s", path);
    char line[512];
    int lineno = 0;
    char needle[256];
    snprintf(needle, sizeof needle, "panic(\"%s", msg);
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *at = strstr(line, needle);
        if (at) {
            fclose(f);
            char *out = malloc(512);
            snprintf(out, 512, "shape.bext:%d:%d: error[E1007]: panic: %s", lineno, (int)(at - line) + 1, msg);
            return out;
        }
    }
    fclose(f);
    cr_assert_fail("no panic(\"%s...\") in %s", msg, path);
    return NULL;
}

#define EXPECT_PANIC(line, msg, fn)                                                      \
    do {                                                                                 \
        char *loc_ = panic_location(msg);                                                \
        EXPECT_ERROR(&h, (line), loc_, "<repl>:1:1: note: in this call to `" fn "`");    \
        free(loc_);                                                                      \
    } while (0)

Test(stdlib_shape, broadcast)
{
    EXPECT_VALUE(&h, "broadcast(&[2, 1, 3], &[4, 3])", "[2, 4, 3]");
    EXPECT_VALUE(&h, "broadcast(&[5, 1], &[1, 6])", "[5, 6]");
    EXPECT_VALUE(&h, "broadcast(&[], &[3])", "[3]");
    EXPECT_VALUE(&h, "broadcast(&[1], &[])", "[1]");
    EXPECT_VALUE(&h, "broadcast(&[8, 1, 6, 1], &[7, 1, 5])", "[8, 7, 6, 5]");
    EXPECT_VALUE(&h, "broadcast(&[0, 3], &[1, 3])", "[0, 3]");
    EXPECT_PANIC("broadcast(&[2, 3], &[4, 3])", "shapes are not broadcastable", "broadcast");
    EXPECT_PANIC("broadcast(&[3], &[4])", "shapes are not broadcastable", "broadcast");
}

Test(stdlib_shape, matmul_shape)
{
    EXPECT_VALUE(&h, "matmul_shape(&[2, 3], &[3, 4])", "[2, 4]");
    EXPECT_VALUE(&h, "matmul_shape(&[10, 2, 3], &[3, 4])", "[10, 2, 4]");
    EXPECT_VALUE(&h, "matmul_shape(&[1, 5, 2, 3], &[7, 1, 3, 4])", "[7, 5, 2, 4]");
    /* NumPy's rank-1 rules: the inserted axis disappears again. */
    EXPECT_VALUE(&h, "matmul_shape(&[3], &[3, 4])", "[4]");
    EXPECT_VALUE(&h, "matmul_shape(&[2, 3], &[3])", "[2]");
    EXPECT_VALUE(&h, "matmul_shape(&[3], &[3])", "[]");
    EXPECT_VALUE(&h, "matmul_shape(&[6, 2, 3], &[3])", "[6, 2]");
    EXPECT_PANIC("matmul_shape(&[2, 3], &[4, 5])", "matmul contracted dimensions differ", "matmul_shape");
    EXPECT_PANIC("matmul_shape(&[], &[3])", "matmul needs operands of rank >= 1", "matmul_shape");
    /* Incompatible batch dims fail in broadcast, called from matmul_shape. */
    char *loc = panic_location("shapes are not broadcastable");
    EXPECT_ERROR(&h, "matmul_shape(&[2, 2, 3], &[5, 3, 4])", loc, "note: in this call to `broadcast`",
                 "<repl>:1:1: note: in this call to `matmul_shape`");
    free(loc);
}

Test(stdlib_shape, reduce_shape)
{
    EXPECT_VALUE(&h, "reduce_shape(&[2, 3, 4], 1, true)", "[2, 1, 4]");
    EXPECT_VALUE(&h, "reduce_shape(&[2, 3, 4], 1, false)", "[2, 4]");
    EXPECT_VALUE(&h, "reduce_shape(&[5], 0, false)", "[]");
    EXPECT_PANIC("reduce_shape(&[2, 3], 2, true)", "reduction axis is out of range", "reduce_shape");
    EXPECT_ERROR(&h, "reduce_shape(&[2, 3], -1, true)", "error[E1004]: negative value -1 cannot be a `usize`");
}

Test(stdlib_shape, cat_shape)
{
    EXPECT_VALUE(&h, "cat_shape(&[2, 3], &[4, 3], 0)", "[6, 3]");
    EXPECT_VALUE(&h, "cat_shape(&[2, 3], &[2, 5], 1)", "[2, 8]");
    EXPECT_PANIC("cat_shape(&[2, 3], &[2, 3, 1], 0)", "cat needs shapes of equal rank", "cat_shape");
    EXPECT_PANIC("cat_shape(&[2, 3], &[2, 3], 2)", "cat axis is out of range", "cat_shape");
    EXPECT_PANIC("cat_shape(&[2, 3], &[4, 5], 0)", "cat shapes differ on an axis", "cat_shape");
}

Test(stdlib_shape, permute_shape)
{
    EXPECT_VALUE(&h, "permute_shape(&[2, 3, 4], &[2, 0, 1])", "[4, 2, 3]");
    EXPECT_VALUE(&h, "permute_shape(&[2, 3], &[0, 1])", "[2, 3]");
    EXPECT_VALUE(&h, "permute_shape(&[], &[])", "[]");
    EXPECT_PANIC("permute_shape(&[2, 3], &[0])", "permutation length differs", "permute_shape");
    EXPECT_PANIC("permute_shape(&[2, 3], &[0, 2])", "permutation names an axis beyond", "permute_shape");
    EXPECT_PANIC("permute_shape(&[2, 3, 4], &[1, 1, 0])", "permutation names an axis twice", "permute_shape");
}

Test(stdlib_shape, conv2d_shape)
{
    /* 1x3x32x32 input, 8x3x3x3 weight, stride 1, padding 1: same size. */
    EXPECT_VALUE(&h, "conv2d_shape(&[1, 3, 32, 32], &[8, 3, 3, 3], &[1, 1], &[1, 1], &[1, 1], 1)", "[1, 8, 32, 32]");
    /* stride 2, no padding: (32 - 3) / 2 + 1 = 15; asymmetric kernel. */
    EXPECT_VALUE(&h, "conv2d_shape(&[4, 3, 32, 30], &[16, 3, 3, 5], &[2, 2], &[0, 0], &[1, 1], 1)", "[4, 16, 15, 13]");
    /* dilation 2 makes a 3x3 kernel span 5: 10 - 5 + 1 = 6. */
    EXPECT_VALUE(&h, "conv2d_shape(&[1, 1, 10, 10], &[1, 1, 3, 3], &[1, 1], &[0, 0], &[2, 2], 1)", "[1, 1, 6, 6]");
    /* groups: 8 input channels in 4 groups of 2. */
    EXPECT_VALUE(&h, "conv2d_shape(&[2, 8, 5, 5], &[12, 2, 1, 1], &[1, 1], &[0, 0], &[1, 1], 4)", "[2, 12, 5, 5]");
    EXPECT_PANIC("conv2d_shape(&[3, 32, 32], &[8, 3, 3, 3], &[1, 1], &[0, 0], &[1, 1], 1)",
                 "conv2d input must be NCHW", "conv2d_shape");
    EXPECT_PANIC("conv2d_shape(&[1, 4, 32, 32], &[8, 3, 3, 3], &[1, 1], &[0, 0], &[1, 1], 1)",
                 "conv2d input channels differ", "conv2d_shape");
    EXPECT_PANIC("conv2d_shape(&[1, 3, 2, 2], &[8, 3, 3, 3], &[1, 1], &[0, 0], &[1, 1], 1)",
                 "conv2d kernel (with dilation) is larger", "conv2d_shape");
    EXPECT_PANIC("conv2d_shape(&[1, 3, 8, 8], &[8, 3, 3, 3], &[0, 1], &[0, 0], &[1, 1], 1)",
                 "conv2d stride and dilation must be at least 1", "conv2d_shape");
    EXPECT_PANIC("conv2d_shape(&[1, 3, 8, 8], &[8, 3, 3, 3], &[1], &[0, 0], &[1, 1], 1)",
                 "conv2d stride, padding and dilation", "conv2d_shape");
    EXPECT_PANIC("conv2d_shape(&[1, 6, 8, 8], &[7, 2, 3, 3], &[1, 1], &[0, 0], &[1, 1], 3)",
                 "conv2d output channels are not divisible", "conv2d_shape");
}

/* A helper calls its own module's fns: the root's `broadcast` does not
 * replace the one std::shape's matmul_shape uses. */
Test(stdlib_scoping, helpers_resolve_in_their_module)
{
    harness hs;
    h_init_checked(&hs, "use std::shape::{matmul_shape};\n"
                        "fn broadcast(a: &Shape, b: &Shape) -> Shape { [999] }\n");
    char *got = h_eval(&hs, "matmul_shape(&[2, 2, 3], &[2, 3, 4])");
    cr_expect_str_eq(got, "[2, 2, 4]");
    free(got);
    got = h_eval(&hs, "broadcast(&[1], &[1])");
    cr_expect_str_eq(got, "[999]");
    free(got);
    h_fini(&hs);
}
