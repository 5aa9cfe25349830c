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

#include "repl_util.h"

/* The session runs in the folder of the §4 example. */
static char *run_scalars(const char *input, int *status)
{
    char cwd[1024];
    snprintf(cwd, sizeof cwd, "%s/tests/compiler/lang", env_or_fail("BEXT_SOURCE_DIR"));
    return run_repl(cwd, "", input, status);
}

Test(repl_scalars, section_4_example)
{
    int st;
    char *out = run_scalars(":load scalars.bext\n"
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
    char *out = run_scalars(":load scalars.bext\n"
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
        "<repl>:1:16: error[E0402]: no method `to_cod` on `Strategy`",
        "help: did you mean `to_code`?",
        "error[E1012]: `Ops::blend` takes 2 arguments but 1 was given",
        "error[E1011]: expected `Trait::method(args...)`",
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
