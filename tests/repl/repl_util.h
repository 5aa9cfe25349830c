/* repl_util.h — what the REPL tests share: run bext-repl with a script on
 * stdin (from a temporary file, so no prompts are printed) and capture the
 * merged stdout+stderr transcript; small file helpers.  Header-only: each
 * test_*.c is its own Criterion executable. */
#ifndef BEXT_TEST_REPL_UTIL_H
#define BEXT_TEST_REPL_UTIL_H

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static inline const char *env_or_fail(const char *name)
{
    const char *v = getenv(name);
    cr_assert(v && *v, "%s is not set (run through ctest)", name);
    return v;
}

static inline char *read_all(FILE *f)
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

static inline char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return calloc(1, 1);
    char *s = read_all(f);
    fclose(f);
    return s;
}

/* A fresh temporary directory (removed by the caller with rm_tree). */
static inline void make_tmpdir(char dir[64])
{
    strcpy(dir, "/tmp/bext-repl-test-XXXXXX");
    cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
}

static inline void rm_tree(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect(system(cmd) == 0);
}

static inline void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* Runs `bext-repl ARGS` in `cwd` with `input` on stdin; returns the merged
 * stdout+stderr transcript and stores the exit status. */
static inline char *run_repl(const char *cwd, const char *args, const char *input, int *status)
{
    char dir[64];
    make_tmpdir(dir);
    char inpath[128];
    snprintf(inpath, sizeof inpath, "%s/input.txt", dir);
    write_file(inpath, input);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s/bext-repl' %s < '%s' 2>&1", cwd, env_or_fail("BEXT_BIN_DIR"), args,
             inpath);
    FILE *p = popen(cmd, "r");
    cr_assert(p, "popen failed");
    char *out = read_all(p);
    int st = pclose(p);
    if (status)
        *status = st;
    rm_tree(dir);
    return out;
}

#endif
