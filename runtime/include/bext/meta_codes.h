/* meta_codes.h — the codes of a failed metadata evaluation, one table for
 * both places that evaluate metadata: bextc's interpreter (its diagnostics,
 * compiler/diag_codes.h includes these rows) and generated code (gen.h's
 * bext_gen_fail), so the two report a failure with the same code.
 *
 * BEXT_META_CODES(X, P): X(P##NAME, CODE, "one-line description"); P is
 * the prefix each side names the rows with (BXI_E_ in bextc,
 * BEXT_META_E_ in gen.h).  CODE is a bare token, stringized where a string
 * is needed; the description is what `bextc --explain CODE` prints.
 * ORDER: none (codes are looked up by string); codes are stable. */
#ifndef BEXT_META_CODES_H
#define BEXT_META_CODES_H

#define BEXT_META_CODES(X, P)                                                                 \
  X(P##OVERFLOW,    E1001, "integer overflow, or a value out of the type's range")          \
  X(P##DIV_ZERO,    E1002, "division or remainder by zero")                                 \
  X(P##INDEX,       E1003, "index out of range")                                            \
  X(P##NEGATIVE,    E1004, "negative value for an unsigned type")                           \
  X(P##RECURSION,   E1005, "call depth limit reached")                                      \
  X(P##BUDGET,      E1006, "loop iteration or step budget exhausted")                       \
  X(P##PANIC,       E1007, "`panic(\"...\")` was called")                                   \
  X(P##TYPE,        E1008, "operation on the wrong kind of value")                          \
  X(P##NAME,        E1009, "unknown variable, function, type or method")                    \
  X(P##UNSUPPORTED, E1010, "not evaluable here (tensor ops, ...)")                          \
  X(P##META,        E1011, "`:meta` or `#[fusion]` misuse")                                 \
  X(P##ARITY,       E1012, "wrong number of arguments")

#endif
