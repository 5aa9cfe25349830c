/* test_repl.c — bext-repl end to end: the binary is run with its stdin from
 * a script (a pipe, so no prompts are printed) and stdout+stderr captured,
 * and the transcript is compared with what language.md §7 promises: the §7
 * session verbatim, errors with locations that keep the session alive,
 * :type, :meta (field expressions, closures, struct outputs, default),
 * :reload after a file change, multi-line input, :quit. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "repl_util.h"

static char *data_dir(void)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/tests/repl/data", env_or_fail("BEXT_SOURCE_DIR"));
    return path;
}

#define EXPECT_HAS(out, frag) cr_expect(strstr((out), (frag)) != NULL, "`%s` not in transcript:\n%s", (frag), (out))
#define EXPECT_LACKS(out, frag) cr_expect(strstr((out), (frag)) == NULL, "`%s` unexpectedly in transcript:\n%s", (frag), (out))

Test(repl, language_md_section_7_session)
{
    int st;
    char *out = run_repl(data_dir(), "",
                         ":load ext.bext\n"
                         "let x = TensorSpec::new([2, 3], DType::F32)\n"
                         "joined_shape(&x.shape, &[4, 3], &0)\n"
                         ":meta MyExtension::transpose_2d(x)\n",
                         &st);
    cr_expect_str_eq(out, "[6, 3]\nTensorSpec { shape: [3, 2], dtype: F32 }\n");
    cr_expect_eq(st, 0);
    free(out);
}

/* --echo turns a piped session into the transcript language.md §7 shows. */
Test(repl, echo_prints_the_section_7_transcript)
{
    int st;
    char *out = run_repl(data_dir(), "--echo",
                         ":load ext.bext\n"
                         "let x = TensorSpec::new([2, 3], DType::F32)\n"
                         "joined_shape(&x.shape, &[4, 3], &0)\n"
                         ":meta MyExtension::transpose_2d(x)\n",
                         &st);
    cr_expect_str_eq(out, "bext> :load ext.bext\n"
                          "bext> let x = TensorSpec::new([2, 3], DType::F32)\n"
                          "bext> joined_shape(&x.shape, &[4, 3], &0)\n"
                          "[6, 3]\n"
                          "bext> :meta MyExtension::transpose_2d(x)\n"
                          "TensorSpec { shape: [3, 2], dtype: F32 }\n");
    cr_expect_eq(st, 0);
    free(out);
}

Test(repl, files_on_the_command_line)
{
    char *out = run_repl(data_dir(), "counted.bext ext.bext",
                         "joined_shape(&[1, 2], &[3, 4], &1)\n"
                         "let x = TensorSpec::new([2, 3], DType::F32)\n"
                         ":meta MyExtension::counted(x)\n",
                         NULL);
    cr_expect_str_eq(out, "[1, 6]\nCountedMetadata { tensor: TensorSpec { shape: [2, 3], dtype: F32 }, count: 6 }\n");
    free(out);
}

Test(repl, errors_are_located_and_keep_the_session_alive)
{
    char *out = run_repl(data_dir(), "",
                         "let s = [2, 3]\n"
                         "s[5]\n"
                         "1 +\n"
                         ":bogus\n"
                         "nope(1)\n"
                         "let a: u8 = 255\n"
                         "  a + 1\n"
                         "let z: u32 = 0\n"
                         "10 / z\n"
                         ":load does-not-exist.bext\n"
                         "s.len()\n",
                         NULL);
    EXPECT_HAS(out, "<repl>:1:1: error[E1003]: index 5 is out of range for a shape of rank 2");
    EXPECT_HAS(out, "<repl>:1:");                       /* the syntax error of `1 +` */
    EXPECT_HAS(out, "error: unknown command `:bogus`");
    EXPECT_HAS(out, "<repl>:1:1: error[E0302]:");            /* nope(1) */
    EXPECT_HAS(out, "nope");
    /* The caret points at the whole operation, under the typed line. */
    EXPECT_HAS(out, "<repl>:1:3: error[E1001]: attempt to add with overflow");
    EXPECT_HAS(out, "  a + 1\n  ^~~~~\n");
    EXPECT_HAS(out, "<repl>:1:1: error[E1002]: attempt to divide `10` by zero");
    EXPECT_HAS(out, "does-not-exist.bext");
    /* ... and the session went on to the last line. */
    size_t n = strlen(out);
    cr_expect(n >= 2 && strcmp(out + n - 2, "2\n") == 0, "last line is not `2`:\n%s", out);
    free(out);
}

Test(repl, type_command)
{
    char *out = run_repl(data_dir(), "ext.bext",
                         ":type TensorSpec::new([2], DType::F32)\n"
                         ":type [1, 2].len()\n"
                         "let x = TensorSpec::new([2, 3], DType::F32)\n"
                         ":type &x.shape\n"
                         ":type joined_shape(&x.shape, &x.shape, &1)\n"
                         ":type DType::F16\n",
                         NULL);
    cr_expect_str_eq(out, "TensorSpec\nusize\n&Shape\nShape\nDType\n");
    free(out);
    /* The checker's answer, not the interpreter's: an unconstrained literal
     * is i64 (types.h), and a type error stops the line before it runs. */
    out = run_repl(data_dir(), "", ":type 1 + 1\nlet a: u32 = 1; let b: usize = 2; a + b\n[1][a]\n", NULL);
    EXPECT_HAS(out, "i64\n");
    EXPECT_HAS(out, "<repl>:1:");
    EXPECT_LACKS(out, "mismatched integer types: `u32` + `usize`");   /* the interpreter's wording */
    EXPECT_LACKS(out, "index 0");
    free(out);
}

Test(repl, ast_dump)
{
    char *out = run_repl(data_dir(), "", ":ast let x = 1 + 2\n", NULL);
    EXPECT_HAS(out, "(let x\n");
    EXPECT_HAS(out, "(binary +\n");
    EXPECT_HAS(out, "(int 2 = 2)");
    free(out);
}

Test(repl, meta_closures_struct_outputs_and_stdlib)
{
    char *out = run_repl(data_dir(), "counted.bext",
                         "let x = TensorSpec::new([4, 5], DType::F16)\n"
                         ":meta MyExtension::counted(x)\n"
                         ":meta MyExtension::add_like(x, TensorSpec::new([3, 1, 5], DType::F16))\n"
                         ":meta MyExtension::add_like(x, TensorSpec::new([3, 5], DType::F16))\n"
                         ":meta MyExtension::counted([1])\n"
                         ":meta MyExtension::transpose_2d(x)\n",
                         NULL);
    EXPECT_HAS(out, "CountedMetadata { tensor: TensorSpec { shape: [4, 5], dtype: F16 }, count: 20 }\n");
    EXPECT_HAS(out, "TensorSpec { shape: [3, 4, 5], dtype: F16 }\n");
    /* The incompatible broadcast fails inside std::shape, reached from the
     * annotation: the error is located in stdlib/std/shape.bext. */
    EXPECT_HAS(out, "std/shape.bext:");
    EXPECT_HAS(out, "error[E1007]: panic: shapes are not broadcastable");
    /* [4, 5] vs [3, 5]: the message names both dims and the axis */
    EXPECT_HAS(out, "dim 4 of the first and dim 3 of the second clash at axis 0 of the result");
    EXPECT_HAS(out, "note: in this call to `broadcast`");
    EXPECT_HAS(out, "error[E1011]: argument `input` is a tensor: pass a `TensorSpec`");
    /* The session continues after the errors. */
    EXPECT_HAS(out, "TensorSpec { shape: [5, 4], dtype: F16 }\n");
    free(out);
}

Test(repl, reload_after_a_file_change)
{
    char dir[64];
    make_tmpdir(dir);
    char path[128], outpath[128];
    snprintf(path, sizeof path, "%s/v.bext", dir);
    snprintf(outpath, sizeof outpath, "%s/out.txt", dir);
    write_file(path, "fn version() -> u32 { 1 }\n");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s/bext-repl' v.bext > out.txt 2>&1", dir, env_or_fail("BEXT_BIN_DIR"));
    FILE *p = popen(cmd, "w");
    cr_assert(p);
    fputs("let kept = [7]\nversion()\n", p);
    fflush(p);
    /* Wait (bounded) until the first answer is out before changing the file. */
    char *out = NULL;
    for (int i = 0; i < 200; i++) {
        free(out);
        out = slurp(outpath);
        if (strstr(out, "1\n"))
            break;
        usleep(50 * 1000);
    }
    cr_assert(strstr(out, "1\n"), "no answer before the change:\n%s", out);
    free(out);
    write_file(path, "fn version() -> u32 { 2 }\nfn extra() -> u32 { version() + 40 }\n");
    fputs(":reload\nversion()\nextra()\nkept\n", p);
    cr_expect_eq(pclose(p), 0);
    out = slurp(outpath);
    cr_expect_str_eq(out, "1\n2\n42\n[7]\n");
    free(out);
    rm_tree(dir);
}

Test(repl, multiline_input_helpers_and_quit)
{
    char *out = run_repl(data_dir(), "",
                         "let y: usize = {\n"
                         "    let z = 2;\n"
                         "    z * 3\n"
                         "}\n"
                         "fn area(s: &Shape) -> usize {\n"
                         "    s[0] * s[1]\n"
                         "}\n"
                         "area(&[y, 7])\n"
                         ":quit\n"
                         "y + 1000\n",
                         NULL);
    cr_expect_str_eq(out, "42\n");
    free(out);
}

Test(repl, broken_file_is_reported_with_its_location)
{
    char dir[64];
    make_tmpdir(dir);
    char path[128];
    snprintf(path, sizeof path, "%s/bad.bext", dir);
    write_file(path, "fn ok() -> u32 { 1 }\nfn broken( -> u32 { 2 }\n");
    char *out = run_repl(dir, "bad.bext", "1 + 1\n", NULL);
    EXPECT_HAS(out, "bad.bext:2:");
    EXPECT_HAS(out, "error[");
    EXPECT_HAS(out, "2\n");
    free(out);
    rm_tree(dir);
}
