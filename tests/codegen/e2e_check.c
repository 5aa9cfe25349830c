/* e2e_check.c — check mode (bext_set_check, BEXT_CHECK=1), end to end over
 * the generated C of ext/checked.bext: an implementation returning the
 * wrong shape, the wrong dtype, the wrong enum variant or a wrong ordinary
 * field is caught with the method, the implementation, the output field
 * and both values in the message; a shape expression's own panic stops
 * the call before any implementation runs; an implementation overriding a
 * default body is held to the body's output spec (computed over meta
 * tensors, no data); a correct implementation passes silently; and with
 * check mode off the same wrong results go through (what check mode is
 * for).  Leaks are caught by LSan in the sanitizer build. */
#include <criterion/criterion.h>
#include <string.h>

#include "checked.h"

static bext_tensor *mat(const char *dev, int64_t r, int64_t c) {
  float v[12] = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12};
  bext_tensor *t = bext_from_data(v, BEXT_F32, (int64_t[]){r, c}, 2, bext_device_get(dev));
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

static void on(void) { bext_set_check(true); }
static void off(void) { bext_set_check(false); }

#define EXPECT_ERROR(text)                                                                       \
  cr_expect_str_eq(bext_last_error(), text)

Test(check, correct_implementations_pass_silently, .init = on, .fini = off) {
  for (int d = 0; d < 2; d++) {
    const char *dev = d ? "ndarray" : "flex";
    bext_clear_error();
    bext_tensor *r = checked_same(mat(dev, 2, 3), 0);
    cr_expect_not_null(r, "%s: %s", dev, bext_last_error());
    bext_release(r);
    Counted c;
    cr_expect(checked_counted(mat(dev, 2, 3), 0, &c), "%s", bext_last_error());
    cr_expect_eq(c.count, 6);
    counted_release(&c);
    Packet p;
    cr_expect(checked_packet(mat(dev, 2, 3), false, &p), "%s", bext_last_error());
    packet_release(&p);
    r = checked_matrix_only(mat(dev, 2, 3));
    cr_expect_not_null(r, "%s", bext_last_error());
    bext_release(r);
    r = checked_doubled(mat(dev, 3, 3)); /* square: the transpose goes unnoticed, as it should */
    cr_expect_not_null(r, "%s", bext_last_error());
    bext_release(r);
    r = checked_doubled(mat(dev, 2, 3)); /* ndarray runs the default body itself */
    if (d) cr_expect_not_null(r, "%s", bext_last_error());
    bext_release(r);
    cr_expect_str_eq(bext_last_error(), d ? "" : bext_last_error());
  }
  cr_expect(bext_check_enabled());
}

Test(check, wrong_shape, .init = on, .fini = off) {
  cr_expect_null(checked_same(mat("flex", 2, 3), 1));
  EXPECT_ERROR("Checked::same (flex implementation) disagrees with its metadata: output `output` is [6] f32, "
               "the metadata says [2, 3] f32");
}

Test(check, wrong_dtype, .init = on, .fini = off) {
  cr_expect_null(checked_same(mat("flex", 2, 3), 2));
  EXPECT_ERROR("Checked::same (flex implementation) disagrees with its metadata: output `output` is [2, 3] f64, "
               "the metadata says [2, 3] f32");
}

Test(check, wrong_ordinary_field, .init = on, .fini = off) {
  Counted c;
  cr_expect(!checked_counted(mat("flex", 2, 3), 1, &c));
  EXPECT_ERROR("Checked::counted (flex implementation) disagrees with its metadata: output `output.count` is 7, "
               "the metadata says 6");
  cr_expect_null(c.tensor, "a failed call leaves the output zeroed");
}

Test(check, wrong_enum_variant, .init = on, .fini = off) {
  Packet p;
  cr_expect(!checked_packet(mat("flex", 2, 3), true, &p));
  EXPECT_ERROR("Checked::packet (flex implementation) disagrees with its metadata: output `output` is variant "
               "Empty, the metadata says variant Full");
  cr_expect_eq(p.tag, 0);
}

Test(check, a_shape_expression_panic_stops_the_call, .init = on, .fini = off) {
  float v[3] = {1, 2, 3};
  bext_tensor *x = bext_from_data(v, BEXT_F32, (int64_t[]){3}, 1, bext_device_get("flex"));
  cr_expect_null(checked_matrix_only(x));
  EXPECT_ERROR("Checked::matrix_only: its metadata fails for these inputs (check mode): "
               "panic: x must be a matrix");
}

Test(check, an_override_is_held_to_the_default_body, .init = on, .fini = off) {
  cr_expect_null(checked_doubled(mat("flex", 2, 3)));
  EXPECT_ERROR("Checked::doubled (flex implementation) disagrees with its default body: output `output` is "
               "[3,2] f32, the default body over specs gives [2,3] f32");
}

Test(check, off_lets_the_same_results_through) {
  bext_set_check(false);
  bext_tensor *r = checked_same(mat("flex", 2, 3), 1);
  cr_expect_not_null(r, "unchecked: the wrong shape goes through");
  cr_expect_eq(bext_rank(r), 1);
  bext_release(r);
  Counted c;
  cr_expect(checked_counted(mat("flex", 2, 3), 1, &c));
  cr_expect_eq(c.count, 7);
  counted_release(&c);
}

/* An output of the wrong declared kind: caught in check mode, and always
 * in debug builds (this test is built like the library: the sanitizer
 * build is a debug build, the optimized one defines NDEBUG). */
Test(check, output_kinds, .fini = off) {
  bext_set_check(true);
  cr_expect_null(checked_same(mat("flex", 2, 3), 3));
  EXPECT_ERROR("Checked::same (flex implementation) returned output `output` of dtype i32, declared FloatTensor");
  bext_set_check(false);
  bext_tensor *r = checked_same(mat("flex", 2, 3), 3);
#ifdef NDEBUG
  cr_expect_not_null(r, "release builds skip the output-kind lookup outside check mode");
#else
  cr_expect_null(r, "debug builds always check output kinds");
  EXPECT_ERROR("Checked::same (flex implementation) returned output `output` of dtype i32, declared FloatTensor");
#endif
  bext_release(r);
  r = checked_same(bext_cast(mat("flex", 2, 3), BEXT_F64), 0);
  cr_expect_not_null(r, "f64 is a float: %s", bext_last_error());
  bext_release(r);
}

/* On flex+fusion a method with tensor metadata is recorded: its output
 * handle comes from the metadata at once, and an implementation that
 * disagrees is caught when the deferred call runs (at the read), with or
 * without check mode, naming the method and both specs.  A shape
 * expression's own panic stops the call at record time. */
Test(check, fusion_records_from_metadata_and_catches_disagreement) {
  const bext_device *fu = bext_device_get("flex+fusion");
  bext_fusion_stat s0, s1;
  cr_assert(bext_fusion_stats(&s0));
  bext_tensor *ok = checked_same(mat("flex+fusion", 2, 3), 0);
  bext_tensor *bad = checked_same(mat("flex+fusion", 2, 3), 1);
  cr_assert(ok && bad, "%s", bext_last_error());
  cr_expect_eq(bext_rank(bad), 2, "published from the metadata, before the implementation ran");
  cr_expect_eq(bext_device_of(bad), fu);
  float got[6];
  cr_expect(bext_read(ok, got, sizeof got), "%s", bext_last_error());
  cr_expect_eq(got[1], -2.0f);
  cr_expect(!bext_read(bad, got, sizeof got));
  cr_expect(strstr(bext_last_error(), "Checked::same (flex implementation) disagrees with its metadata: output "
                                      "`output` is [6] f32, the metadata says [2, 3] f32"),
            "check mode's comparator and message, check mode or not: %s", bext_last_error());
  cr_assert(bext_fusion_stats(&s1));
  cr_expect_geq(s1.ops_recorded - s0.ops_recorded, 2, "both calls were recorded");
  bext_release(ok);
  bext_release(bad);
  cr_expect(!bext_sync(fu), "sync reports the deferred failure once");
  cr_expect(bext_sync(fu), "%s", bext_last_error());

  cr_expect_null(checked_matrix_only(bext_reshape(mat("flex+fusion", 2, 3), (int64_t[]){6}, 1)));
  cr_expect(strstr(bext_last_error(), "x must be a matrix"), "%s", bext_last_error());
}

/* Struct outputs are lazy too: the call is recorded, its tensor handle
 * and its ordinary field `count` published at once from the metadata;
 * outside check mode the backend's own count (7, the metadata says 6) is
 * discarded (language.md §5), and the tensor reads the backend's value. */
Test(check, fusion_struct_output_is_lazy) {
  const bext_device *fu = bext_device_get("flex+fusion");
  cr_assert(bext_sync(fu), "%s", bext_last_error());
  bext_fusion_stat s0, s1;
  for (size_t extra = 0; extra < 2; extra++) {
    cr_assert(bext_fusion_stats(&s0));
    Counted c;
    cr_assert(checked_counted(mat("flex+fusion", 2, 3), extra, &c), "%s", bext_last_error());
    cr_assert(bext_fusion_stats(&s1));
    cr_expect_eq(s1.ops_run, s0.ops_run, "recorded, not run");
    cr_expect_eq(c.count, 6, "the metadata's count, published at once");
    cr_expect_eq(bext_device_of(c.tensor), fu);
    cr_expect(bext_rank(c.tensor) == 2 && bext_shape(c.tensor)[1] == 3);
    float got[6];
    cr_expect(bext_read(c.tensor, got, sizeof got), "extra %zu: %s", extra, bext_last_error());
    cr_expect(got[1] == 2.0f && got[5] == 6.0f, "abs(x): %g %g", got[1], got[5]);
    counted_release(&c);
  }
  cr_expect(bext_sync(fu), "%s", bext_last_error());
}

/* A tuple of two tensors: one record with two outputs, each handle lazy;
 * core ops recorded after it read either output (the plan knows which). */
Test(check, fusion_tuple_output_is_lazy) {
  const bext_device *fu = bext_device_get("flex+fusion");
  cr_assert(bext_sync(fu), "%s", bext_last_error());
  for (int iter = 0; iter < 2; iter++) {   /* the second replays the plan */
    bext_fusion_stat s0, s1;
    cr_assert(bext_fusion_stats(&s0));
    checked_tuple2_tensor_tensor t;
    cr_assert(checked_pair(mat("flex+fusion", 2, 3), &t), "%s", bext_last_error());
    bext_tensor *sum = bext_add(bext_retain(t._1), bext_retain(t._0));   /* (2x) + (x + 1) */
    bext_tensor *dbl = bext_mul_scalar(bext_retain(t._1), 10.0);
    cr_assert(sum && dbl, "%s", bext_last_error());
    cr_assert(bext_fusion_stats(&s1));
    cr_expect_eq(s1.ops_run, s0.ops_run, "nothing ran yet");
    float a[6], b[6], c[6];
    cr_assert(bext_read(sum, a, sizeof a), "%s", bext_last_error());
    cr_assert(bext_read(dbl, b, sizeof b), "%s", bext_last_error());
    cr_assert(bext_read(t._0, c, sizeof c), "%s", bext_last_error());
    cr_expect(a[0] == 4.0f && a[1] == -5.0f, "3x + 1: %g %g", a[0], a[1]);
    cr_expect(b[0] == 20.0f && b[1] == -40.0f, "20x: %g %g", b[0], b[1]);
    cr_expect(c[0] == 2.0f && c[1] == -1.0f, "x + 1: %g %g", c[0], c[1]);
    if (iter) {
      cr_assert(bext_fusion_stats(&s1));
      cr_expect_gt(s1.plans_reused, s0.plans_reused, "the same segment reuses its plan");
    }
    bext_release(sum);
    bext_release(dbl);
    bext_release(t._0);
    bext_release(t._1);
  }
  /* outputs released unread: the record is dropped, nothing leaks */
  checked_tuple2_tensor_tensor t;
  cr_assert(checked_pair(mat("flex+fusion", 2, 3), &t), "%s", bext_last_error());
  bext_release(t._0);
  bext_tensor *keep = t._1;
  cr_assert(bext_sync(fu), "%s", bext_last_error());
  float one[6];
  cr_expect(bext_read(keep, one, sizeof one) && one[0] == 2.0f, "one output still held: %s", bext_last_error());
  bext_release(keep);
}

/* An enum output: the variant is the metadata's, published at once with
 * its fields; when the deferred call runs, the backend's actual variant
 * is checked (in every build, check mode or not) before any handle gets
 * its value: a wrong one fails every output with the method and both
 * variants, and binds nothing. */
Test(check, fusion_enum_output_checks_the_variant) {
  const bext_device *fu = bext_device_get("flex+fusion");
  cr_assert(bext_sync(fu), "%s", bext_last_error());
  for (int check = 0; check < 2; check++) {
    bext_set_check(check);
    Packet p;
    cr_assert(checked_packet(mat("flex+fusion", 2, 3), false, &p), "%s", bext_last_error());
    cr_expect_eq(p.tag, PACKET_FULL);
    cr_expect_eq(p.as.Full.tag, 3, "the metadata's ordinary field");
    float got[6];
    cr_expect(bext_read(p.as.Full.t, got, sizeof got) && got[1] == -2.0f, "%s", bext_last_error());
    packet_release(&p);

    bext_fusion_stat s0, s1;
    cr_assert(bext_fusion_stats(&s0));
    cr_assert(checked_packet(mat("flex+fusion", 2, 3), true, &p), "recorded: %s", bext_last_error());
    cr_assert(bext_fusion_stats(&s1));
    cr_expect_eq(s1.ops_run, s0.ops_run, "the backend has not run: the variant is the metadata's");
    cr_expect_eq(p.tag, PACKET_FULL);
    cr_expect_eq(bext_device_of(p.as.Full.t), fu);
    cr_expect(!bext_read(p.as.Full.t, got, sizeof got), "the backend returned Empty");
    cr_expect(strstr(bext_last_error(), "Checked::packet (flex implementation) disagrees with its metadata: "
                                        "output `output` is variant Empty, the metadata says variant Full"),
              "check %d: %s", check, bext_last_error());
    packet_release(&p);
    cr_expect(!bext_sync(fu), "sync reports the deferred failure once");
    cr_expect(strstr(bext_last_error(), "variant Empty, the metadata says variant Full"), "%s", bext_last_error());
  }
  bext_set_check(false);
}

/* Metadata choosing a variant without tensors: nothing to defer, so the
 * call runs at once, and its variant is checked there. */
Test(check, fusion_enum_without_tensors_runs_now) {
  const bext_device *fu = bext_device_get("flex+fusion");
  cr_assert(bext_sync(fu), "%s", bext_last_error());
  Packet p;
  cr_assert(checked_maybe(mat("flex+fusion", 2, 3), false, false, &p), "%s", bext_last_error());
  cr_expect_eq(p.tag, PACKET_EMPTY);
  cr_expect(!checked_maybe(mat("flex+fusion", 2, 3), false, true, &p), "the backend returned Full");
  cr_expect_str_eq(bext_last_error(), "Checked::maybe (flex implementation) disagrees with its metadata: output "
                                      "`output` is variant Full, the metadata says variant Empty");
  cr_expect_eq(p.tag, 0, "a failed call leaves the output zeroed");
  cr_assert(checked_maybe(mat("flex+fusion", 2, 3), true, false, &p), "%s", bext_last_error());
  cr_expect_eq(p.tag, PACKET_FULL);
  cr_expect_eq(p.as.Full.tag, 1);
  packet_release(&p);
  cr_expect(bext_sync(fu), "%s", bext_last_error());
}

/* Check mode under Fusion: the call stays deferred (nothing runs at the
 * call), and when the stream runs, what the backend returned is compared
 * with what was published from the metadata, by the descriptor's
 * meta_check: the read fails with check mode's message, ordinary fields
 * of struct outputs included (the backend's count 7, the metadata's 6). */
Test(check, fusion_in_check_mode_defers_and_fails_at_the_read, .init = on, .fini = off) {
  const bext_device *fu = bext_device_get("flex+fusion");
  cr_assert(bext_sync(fu), "%s", bext_last_error());
  bext_tensor *x = mat("flex+fusion", 2, 3);
  bext_fusion_stat s0, s1, s2;
  cr_assert(bext_fusion_stats(&s0));
  bext_tensor *bad = checked_same(x, 1);
  cr_assert_not_null(bad, "recorded, not run: %s", bext_last_error());
  cr_assert(bext_fusion_stats(&s1));
  cr_expect_eq(s1.ops_run, s0.ops_run, "check mode no longer forces the call to run at once");
  cr_expect_eq(bext_rank(bad), 2, "published from the metadata");
  float got[6];
  cr_expect(!bext_read(bad, got, sizeof got));
  cr_expect(strstr(bext_last_error(), "Checked::same (flex implementation) disagrees with its metadata: output "
                                      "`output` is [6] f32, the metadata says [2, 3] f32"),
            "%s", bext_last_error());
  cr_assert(bext_fusion_stats(&s2));
  cr_expect_gt(s2.ops_run, s1.ops_run, "the call ran at the read");
  bext_release(bad);
  cr_expect(!bext_sync(fu), "sync reports the deferred failure once");
  bext_tensor *good = checked_same(mat("flex+fusion", 2, 3), 0);
  cr_expect(bext_read(good, got, sizeof got), "a correct implementation passes: %s", bext_last_error());
  bext_release(good);
  Counted c;
  cr_assert(checked_counted(mat("flex+fusion", 2, 3), 1, &c), "recorded: %s", bext_last_error());
  cr_expect_eq(c.count, 6, "published from the metadata");
  cr_expect(!bext_read(c.tensor, got, sizeof got));
  cr_expect_str_eq(bext_last_error(), "Checked::counted (flex implementation) disagrees with its metadata: output "
                                      "`output.count` is 7, the metadata says 6");
  counted_release(&c);
  cr_expect(!bext_sync(fu), "sync reports it once");
  cr_expect(bext_sync(fu), "%s", bext_last_error());
}

/* `#[fusion(default)]`: under Fusion the default body is the method's
 * implementation, so it runs on the fusion device and its core ops are
 * recorded lazily; Flex's overriding implementation (which transposes)
 * is not used there. */
Test(check, fusion_default_runs_the_body_lazily) {
  const bext_device *fu = bext_device_get("flex+fusion");
  cr_assert(bext_sync(fu), "%s", bext_last_error());
  for (int check = 0; check < 2; check++) {
    bext_set_check(check);
    bext_fusion_stat s0, s1, s2;
    cr_assert(bext_fusion_stats(&s0));
    bext_tensor *y = checked_doubled(mat("flex+fusion", 2, 3));
    cr_assert_not_null(y, "%s", bext_last_error());
    cr_assert(bext_fusion_stats(&s1));
    cr_expect_eq(s1.ops_run, s0.ops_run, "the body's ops are recorded, not run");
    cr_expect_eq(bext_device_of(y), fu);
    cr_expect(bext_rank(y) == 2 && bext_shape(y)[0] == 2 && bext_shape(y)[1] == 3, "the body's shape, not Flex's transpose");
    float got[6];
    cr_assert(bext_read(y, got, sizeof got), "%s", bext_last_error());
    cr_expect(got[0] == 2.0f && got[1] == -4.0f && got[3] == -8.0f, "x * 2: %g %g %g", got[0], got[1], got[3]);
    cr_assert(bext_fusion_stats(&s2));
    cr_expect_gt(s2.ops_run, s1.ops_run);
    bext_release(y);
  }
  bext_set_check(false);
}

