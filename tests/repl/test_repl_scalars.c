/* test_repl_scalars.c — bext-repl's `:scalars Trait::method(args...)` and
 * impl methods at the prompt, end to end: the binary runs with a piped
 * script over the language.md §4 example (tests/compiler/lang/scalars.bext)
 * and the transcript is compared: one `name = value (kind)` line per scalar
 * in declaration order, located errors that keep the session alive. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *env_or_fail(const char *name)
{
    const char *v = getenv(name);
    cr_assert(v && *v, "%s is not set (run through ctest)", name);
    return v;
}

static char *read_all(FILE *f)
{
    char *buf = NULL;
    size_t len = 0, cap = 0;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            buf = realloc(buf, cap);
            cr_assert(buf);
        }
        memcpy(buf + len, chunk, n);
        len += n;
    }
    if (!buf)
        buf = calloc(1, 1);
    else
        buf[len] = 0;
    return buf;
}

/* Runs bext-repl in the §4 example's folder with `input` on stdin (from a
 * temporary file); returns stdout+stderr and stores the exit status. */
static char *run_repl(const char *input, int *status)
{
    char dir[] = "/tmp/bext-repl-scalars-XXXXXX";
    cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
    char inpath[128];
    snprintf(inpath, sizeof inpath, "%s/input.txt", dir);
    FILE *f = fopen(inpath, "w");
    cr_assert(f);
    fputs(input, f);
    fclose(f);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd '%s/tests/compiler/lang' && '%s/bext-repl' < '%s' 2>&1",
             env_or_fail("BEXT_SOURCE_DIR"), env_or_fail("BEXT_BIN_DIR"), inpath);
    FILE *p = popen(cmd, "r");
    cr_assert(p, "popen failed");
    char *out = read_all(p);
    int st = pclose(p);
    if (status)
        *status = st;
    unlink(inpath);
    rmdir(dir);
    return out;
}

Test(repl_scalars, section_4_example)
{
    int st;
    char *out = run_repl(":load scalars.bext\n"
                         "let x = TensorSpec::new([2, 3], DType::F32)\n"
                         ":scalars Ops::blend(x, Strategy::Fast)\n"
                         ":scalars Ops::blend(x, Strategy::Accurate)\n"
                         ":scalars Ops::scaled(x, 2.5, 4, true)\n"
                         "Strategy::default_strategy().to_code()\n",
                         &st);
    cr_expect_str_eq(out, "strategy = 0 (custom)\n"
                          "strategy = 1 (custom)\n"
                          "factor = 2.5 (marked)\n"
                          "steps = 4 (inferred)\n"
                          "exact = true (inferred)\n"
                          "1\n");
    cr_expect_eq(st, 0);
    free(out);
}

Test(repl_scalars, methods_typed_at_the_prompt_and_errors)
{
    char *out = run_repl(":load scalars.bext\n"
                         "impl Strategy { fn doubled(&self) -> u32 { self.to_code() * 2 } }\n"
                         "Strategy::Accurate.doubled()\n"
                         "Strategy::Fast.to_cod()\n"
                         ":scalars Ops::blend(TensorSpec::new([1], DType::F32))\n"
                         ":scalars blend\n"
                         "Strategy::Accurate.to_code() + 40\n",
                         NULL);
    /* each error is located and the session goes on */
    const char *want[] = {
        "2\n",
        "<repl>:1:16: error: no method `to_cod` on `Strategy`",
        "help: did you mean `to_code`?",
        "error: `Ops::blend` takes 2 arguments but 1 was given",
        "error: expected `Trait::method(args...)`",
        "41\n",
    };
    const char *at = out;
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const char *hit = strstr(at, want[i]);
        cr_expect(hit != NULL, "`%s` not in order in transcript:\n%s", want[i], out);
        if (hit)
            at = hit + strlen(want[i]);
    }
    free(out);
}
