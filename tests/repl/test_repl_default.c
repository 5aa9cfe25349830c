/* test_repl_default.c — `:meta` on `#[fusion(default)]` methods: the
 * default body runs over TensorSpecs, each op through the runtime's
 * inference rule (bext_infer), so the REPL prints the output spec the
 * generated C would produce, and an op that rejects its operands prints
 * the rule's own message at that op.  A misspelled method gets a
 * did-you-mean.  Data: tests/repl/data/defaults.bext. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "repl_util.h"

static char *data_dir(void)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/tests/repl/data", env_or_fail("BEXT_SOURCE_DIR"));
    return path;
}

#define EXPECT_HAS(out, frag) cr_expect(strstr((out), (frag)) != NULL, "`%s` not in transcript:\n%s", (frag), (out))
#define EXPECT_LACKS(out, frag) cr_expect(strstr((out), (frag)) == NULL, "`%s` unexpectedly in transcript:\n%s", (frag), (out))

Test(repl_default, gelu_like_body_keeps_the_spec)
{
    char *out = run_repl(data_dir(), "defaults.bext",
                         "let x = TensorSpec::new([2, 3], DType::F32)\n"
                         ":meta Acts::gelu_like(x)\n",
                         NULL);
    EXPECT_HAS(out, "TensorSpec { shape: [2, 3], dtype: F32 }\n");
    EXPECT_LACKS(out, "no metadata expression");
    free(out);
}

Test(repl_default, matmul_then_sum_dim_keeps_the_reduced_dim)
{
    char *out = run_repl(data_dir(), "defaults.bext",
                         ":meta Acts::proj_sum(TensorSpec::new([2, 3], DType::F64), TensorSpec::new([3, 4], DType::F64))\n",
                         NULL);
    EXPECT_HAS(out, "TensorSpec { shape: [2, 1], dtype: F64 }\n");
    free(out);
}

Test(repl_default, scalars_transpose_and_whole_reductions)
{
    char *out = run_repl(data_dir(), "defaults.bext",
                         "let x = TensorSpec::new([2, 3], DType::F32)\n"
                         ":meta Acts::scaled(x, 1.0)\n"
                         ":meta Acts::total(x)\n",
                         NULL);
    /* 2.0 - gelu(x).transpose() * 3.0: neg/add_scalar, mul_scalar rows */
    EXPECT_HAS(out, "TensorSpec { shape: [3, 2], dtype: F32 }\n");
    /* x.sum() + 1.0: rank 0 */
    EXPECT_HAS(out, "TensorSpec { shape: [], dtype: F32 }\n");
    free(out);
}

Test(repl_default, shape_mismatch_prints_the_inference_message)
{
    char *out = run_repl(data_dir(), "defaults.bext",
                         ":meta Acts::proj_sum(TensorSpec::new([2, 3], DType::F32), TensorSpec::new([5, 4], DType::F32))\n"
                         ":meta Acts::gelu_like(TensorSpec::new([2], DType::I32))\n"
                         ":meta Acts::gelu_like(TensorSpec::new([4], DType::F32))\n",
                         NULL);
    EXPECT_HAS(out, "defaults.bext:9:17: error[E1011]: bext_matmul: inner extents differ (3 vs 5)");
    EXPECT_HAS(out, "let y = x.matmul(w);");
    EXPECT_HAS(out, "error[E1011]: bext_erf: operand 1 has dtype i32, expected a float dtype");
    /* the session goes on */
    EXPECT_HAS(out, "TensorSpec { shape: [4], dtype: F32 }\n");
    free(out);
}

Test(repl_default, misspelled_method_gets_did_you_mean)
{
    char *out = run_repl(data_dir(), "defaults.bext",
                         "let x = TensorSpec::new([2, 3], DType::F32)\n"
                         ":meta Acts::gelu_lik(x)\n",
                         NULL);
    EXPECT_HAS(out, "error[E1009]: trait `Acts` has no method `gelu_lik`");
    EXPECT_HAS(out, "help: did you mean `gelu_like`?");
    free(out);
}
