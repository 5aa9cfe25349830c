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

/* Two files loaded at once (issue 13): typed input is checked against the
 * first file's unit, and used to see only the first file's names while
 * `:meta` (the interpreter) saw every file's.  Now `:type`, evaluation and
 * `:meta` see the same names; a name both files declare means the first
 * file's, in all three. */
Test(repl_use, type_and_meta_see_every_loaded_file)
{
    char dir[64];
    make_tmpdir(dir);
    char pa[128], pb[128];
    snprintf(pa, sizeof pa, "%s/first.bext", dir);
    snprintf(pb, sizeof pb, "%s/second.bext", dir);
    write_file(pa, "fn scale(x: u64) -> u64 { x * 10 }\n");
    write_file(pb, "fn scale(x: u32) -> u32 { x + 1 }\n"
                   "fn grown(s: &Shape) -> Shape { let mut t = s.clone(); t.push(7); t }\n"
                   "pub struct Pair { pub l: u32, pub r: u32 }\n"
                   "impl Pair { pub fn sum(&self) -> u32 { self.l + self.r } }\n"
                   "#[backend_extension(Flex, Fusion)]\n"
                   "pub trait Grow: Backend {\n"
                   "    #[fusion(dtype = input, shape = grown(input))]\n"
                   "    fn grow(input: FloatTensor<Self>) -> FloatTensor<Self>;\n"
                   "}\n");
    char *out = run_repl(dir, "first.bext second.bext",
                         ":type grown(&[2])\n"
                         "grown(&[2])\n"
                         ":type Pair { l: 1, r: 2 }.sum()\n"
                         "Pair { l: 1, r: 2 }.sum()\n"
                         ":type scale(3)\n"
                         "scale(3)\n"
                         "let f = grown\n"
                         "f(&[1])\n"
                         ":meta Grow::grow(TensorSpec::new([5], DType::F32))\n",
                         NULL);
    cr_expect_str_eq(out, "Shape\n"
                          "[2, 7]\n"
                          "u32\n"
                          "3\n"
                          "u64\n"
                          "30\n"
                          "[1, 7]\n"
                          "TensorSpec { shape: [5, 7], dtype: F32 }\n");
    free(out);
    rm_tree(dir);
}

/* A fn typed at the prompt calls what the checker resolved when it was
 * typed: redefining a name later does not change an older fn's callee
 * (the checker typed `g` against the first `f`'s signature). */
Test(repl_use, a_typed_fn_keeps_the_callee_it_was_checked_against)
{
    char *out = run_repl(".", "",
                         "fn f() -> u32 { 1 }\n"
                         "fn g() -> u32 { f() }\n"
                         "fn f() -> u64 { 2 }\n"
                         "g()\n"
                         ":type f()\n"
                         "f()\n",
                         NULL);
    cr_expect_str_eq(out, "1\nu64\n2\n");
    free(out);
}
