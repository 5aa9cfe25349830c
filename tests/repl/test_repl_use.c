/* test_repl_use.c — `use` typed at the bext-repl prompt: the module is
 * loaded (searched like a file's `use`: current directory, -I, standard
 * library) and its items become callable; a module that cannot be found,
 * or an item it lacks, is a located error on the typed line rather than
 * an import silently dropped; prompt imports end with :reload, like fns
 * typed at the prompt. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "repl_util.h"

#define EXPECT_HAS(out, frag) cr_expect(strstr((out), (frag)) != NULL, "`%s` not in transcript:\n%s", (frag), (out))
#define EXPECT_LACKS(out, frag) cr_expect(strstr((out), (frag)) == NULL, "`%s` unexpectedly in transcript:\n%s", (frag), (out))

Test(repl_use, stdlib_module_at_the_prompt)
{
    char *out = run_repl(".", "",
                         "use nonexistent::{zzz};\n"
                         "use std::shape::{reduce_shape};\n"
                         "reduce_shape(&[2, 3], 1, true)\n"
                         "reduce_shape(&[4, 5], 0, false)\n",
                         NULL);
    EXPECT_HAS(out, "<repl>:1:5: error[E0202]: cannot find module `nonexistent`");
    EXPECT_HAS(out, "use nonexistent::{zzz};\n    ^~~~~~~~~~~\n");
    EXPECT_HAS(out, "[2, 1]\n[5]\n");
    EXPECT_LACKS(out, "unknown function");
    free(out);
}

Test(repl_use, missing_item_is_located_and_nothing_is_imported)
{
    char *out = run_repl(".", "",
                         "use std::shape::{nosuch, reduce_shape};\n"
                         "reduce_shape(&[2, 3], 1, true)\n"
                         "1 + 1\n",
                         NULL);
    EXPECT_HAS(out, "<repl>:1:18: error[E0304]: module `std::shape` has no item `nosuch`");
    /* the failed `use` imported nothing, and the session went on */
    EXPECT_HAS(out, "error[E0302]: unknown function `reduce_shape`");
    size_t n = strlen(out);
    cr_expect(n >= 2 && strcmp(out + n - 2, "2\n") == 0, "last line is not `2`:\n%s", out);
    free(out);
}

Test(repl_use, local_module_and_reload)
{
    char dir[64];
    make_tmpdir(dir);
    char path[128];
    snprintf(path, sizeof path, "%s/geo.bext", dir);
    write_file(path, "pub fn twice(s: &Shape) -> Shape {\n"
                     "    let mut t = s.clone();\n"
                     "    for i in 0..t.len() { t[i] *= 2; }\n"
                     "    t\n"
                     "}\n");
    char *out = run_repl(dir, "",
                         "use geo::{twice};\n"
                         "twice(&[1, 2, 3])\n"
                         "use geo::{twice};\n"       /* again: the loaded module is reused */
                         "twice(&[4])\n"
                         ":reload\n"
                         "twice(&[5])\n",
                         NULL);
    EXPECT_HAS(out, "[2, 4, 6]\n[8]\n");
    /* prompt imports go with :reload, as typed fns do */
    EXPECT_HAS(out, "error[E0302]: unknown function `twice`");
    free(out);
    rm_tree(dir);
}
