/* diag_codes.h — every diagnostic code bextc emits, in one table.
 *
 * X(NAME, CODE, "one-line description")
 *   NAME  the enumerator every module reports with (bxc_diag_code, diag.h):
 *         BXC_E_* front end, CHK_E_* / CHK_W_* checker, BXI_E_* interpreter,
 *         BXC_EMIT_* C generator.
 *   CODE  a bare token: a letter for the severity class (E error, W warning)
 *         and four digits for the area —
 *           E00xx lexical, E01xx syntax, E02xx modules / files / driver,
 *           E03xx-E09xx checker, E10xx interpreter (and the same failures in
 *           generated code, runtime/include/bext/gen.h), E11xx C generator,
 *           W03xx-W09xx checker warnings, W11xx generator warnings,
 *           E9999 the list's own "too many errors".
 *         Stringized for the code string ("E0505"); also pasted into an
 *         enumerator of bxc_diag_code_unique_ (diag.c), so a code listed twice
 *         does not compile.
 *   desc  what `bextc --explain CODE` prints.
 * ORDER: none — codes are looked up by string; append anywhere. */
#ifndef BXC_DIAG_CODES_H
#define BXC_DIAG_CODES_H

#include <bext/meta_codes.h>

#define BXC_DIAG_CODES(X)                                                                     \
    /* ---- front end: lexer, parser, modules (lex, parse*, module.c) ---- */                 \
    X(BXC_E_INTERNAL,        E0000, "internal error: a diagnostic without a code")            \
    X(BXC_E_NUL_BYTE,        E0001, "NUL byte in source")                                     \
    X(BXC_E_BAD_UTF8,        E0002, "invalid UTF-8")                                          \
    X(BXC_E_STRAY_CHAR,      E0003, "character not allowed here")                             \
    X(BXC_E_UNTERM_STRING,   E0004, "unterminated string literal")                            \
    X(BXC_E_UNTERM_COMMENT,  E0005, "unterminated block comment")                             \
    X(BXC_E_BAD_ESCAPE,      E0006, "unknown escape sequence")                                \
    X(BXC_E_INT_TOO_LARGE,   E0007, "integer literal out of range")                           \
    X(BXC_E_BAD_NUMBER,      E0008, "malformed number literal")                               \
    X(BXC_E_SYNTAX,          E0101, "syntax error")                                           \
    X(BXC_E_TOO_DEEP,        E0102, "nested too deeply")                                      \
    X(BXC_E_UNEXPECTED_EOF,  E0103, "unexpected end of file")                                 \
    X(BXC_E_FILE_UNREADABLE, E0201, "cannot read file")                                       \
    X(BXC_E_MODULE_NOT_FOUND,E0202, "module not found")                                       \
    X(BXC_E_MODULE_CYCLE,    E0203, "module import cycle")                                    \
    X(BXC_E_BAD_USE,         E0204, "malformed use")                                          \
    X(BXC_E_TOO_MANY,        E9999, "too many errors: later errors and warnings were dropped") \
    /* ---- checker (check*.c) ---- */                                                        \
    X(CHK_E_UNKNOWN_TYPE,    E0301, "unknown type")                                           \
    X(CHK_E_UNKNOWN_NAME,    E0302, "unknown name or function")                               \
    X(CHK_E_DUPLICATE,       E0303, "duplicate definition")                                   \
    X(CHK_E_IMPORT,          E0304, "`use` names a missing item")                             \
    X(CHK_E_TYPE_ARGS,       E0305, "type arguments where none go")                           \
    X(CHK_E_ALIAS_CYCLE,     E0306, "recursive type alias")                                   \
    X(CHK_E_BAD_TYPE,        E0307, "type not in the language")                               \
    X(CHK_E_MISMATCH,        E0401, "mismatched types: expected X, found Y")                  \
    X(CHK_E_UNKNOWN_METHOD,  E0402, "unknown method")                                         \
    X(CHK_E_UNKNOWN_FIELD,   E0403, "unknown field")                                          \
    X(CHK_E_ARG_COUNT,       E0404, "wrong number of arguments")                              \
    X(CHK_E_NOT_MUTABLE,     E0405, "assignment to something not mutable")                    \
    X(CHK_E_BAD_OPERAND,     E0406, "operator applied to the wrong type")                     \
    X(CHK_E_CLOSURE,         E0407, "closure outside `meta` code")                            \
    X(CHK_E_BAD_EXPR,        E0408, "construct not allowed here")                             \
    X(CHK_E_STRUCT_LIT,      E0409, "struct literal with missing or duplicate fields")        \
    X(CHK_E_UNKNOWN_ATTR,    E0501, "unknown attribute")                                      \
    X(CHK_E_MISPLACED_ATTR,  E0502, "attribute not allowed on this item")                     \
    X(CHK_E_BAD_ATTR,        E0503, "malformed attribute arguments")                          \
    X(CHK_E_CFG,             E0504, "malformed `cfg` predicate")                              \
    X(CHK_E_SELECTOR,        E0505, "not a backend selector")                                 \
    X(CHK_E_DUP_SELECTOR,    E0506, "backend selector given twice")                           \
    X(CHK_E_EXT_TYPE,        E0507, "`#[extension_type]` misuse")                             \
    X(CHK_E_SCALAR_TYPE,     E0508, "`#[fusion(scalar)]` misuse")                             \
    X(CHK_E_RECEIVER,        E0601, "`self` receiver where none is allowed")                         \
    X(CHK_E_MUT_REF,         E0602, "`&mut` parameter: extension methods take owned values or `&` borrows")                      \
    X(CHK_E_UNIT_RETURN,     E0603, "extension method returns nothing")                             \
    X(CHK_E_NO_ROUTING,      E0604, "no tensor input to route the call on")                   \
    X(CHK_E_DUP_METHOD,      E0605, "method defined twice")                                   \
    X(CHK_E_IMPL,            E0606, "`impl` block misuse")                                    \
    X(CHK_E_FUSION_FORM,     E0701, "fusion method needs exactly one form (dtype needs shape)") \
    X(CHK_E_FUSION_DEFAULT,  E0702, "fusion default without a body, or id together with default") \
    X(CHK_E_FIELD_EXPR,      E0703, "field expression breaks its rules")                      \
    X(CHK_E_META,            E0704, "`meta` function arity or mirroring mismatch")            \
    X(CHK_E_FUSION_SIG,      E0705, "fusion method signature breaks the requirements of §5")  \
    X(CHK_E_NO_METADATA,     E0706, "extension type without its metadata companion")          \
    X(CHK_E_OUTPUT,          E0707, "outputs not allowed under Fusion")                       \
    X(CHK_E_BACKWARD,        E0708, "malformed `#[backward]` attribute")              \
    X(CHK_E_BACKWARD_SHAPE,  E0709, "`#[backward]` on a method whose gradient bextc cannot generate (only one FloatTensor output, tensor and ordinary arguments)") \
    X(CHK_E_NO_C_FORM,       E0710, "an extension method's signature or an emitted type the generated C cannot represent (parameter without a name, `()` or a function or type parameter inside a value, a reference output, more than 64 tensors)") \
    X(CHK_E_CUBE_SIG,        E0801, "kernel signature breaks the rules of §8 (parameters, type parameters, return type)") \
    X(CHK_E_CUBE_TYPE,       E0802, "type not available in kernels (bool, u8, i32, u32, i64, f16, bf16, f32, f64 and type parameters)") \
    X(CHK_E_CUBE_READONLY,   E0803, "store into a `&Tensor` kernel parameter (stores need `&mut Tensor`)") \
    X(CHK_E_CUBE_CONST,      E0804, "kernel value that must be a compile-time constant is not one") \
    X(CHK_E_CUBE_SYNC,       E0805, "`sync_cube()` where the units of a cube may not all arrive") \
    X(CHK_E_CUBE_COMPTIME,   E0806, "`#[comptime]` parameter without values, values for no such parameter, or dtypes a type parameter cannot take") \
    X(CHK_E_CUBE_OBJECT,     E0807, "tensor or shared array used as a value") \
    X(CHK_E_CUBE_BUILTIN,    E0808, "unknown kernel function or method") \
    X(CHK_E_CUBE_IR,         E0809, "internal error: the kernel IR verifier rejected a checked kernel") \
    X(CHK_E_CUBE_LOWER,      E0810, "a later kernel stage (LLVM) cannot compile this kernel yet") \
    X(CHK_E_CUBE_HELPER,     E0811, "a `#[cube(helper)]` function breaks the rules of §8 (its arguments, its type parameters, `return`, recursion)") \
    X(CHK_W_CUBE_SKIPPED,    W0801, "kernel left out of DIR/<stem>.kernels.o: the CPU lowering cannot compile it yet (a sync_cube inside if/for/loop)") \
    X(CHK_W_SCALAR_ALIAS,    W0301, "alias of a scalar type is not exposed")                  \
    X(CHK_W_UNUSED_ATTR,     W0302, "attribute has no effect here")                           \
    X(CHK_W_NO_AUTODIFF,     W0303, "`Autodiff` listed, but the method has no default body or `#[backward]`: its `_autodiff` implementation must be hand-written, else the link fails") \
    /* ---- metadata interpreter and REPL evaluation (interp*.c) ---- */                      \
    BEXT_META_CODES(X, BXI_E_)   /* runtime/include/bext/meta_codes.h */                    \
    /* ---- C generator (emit*.c) ---- */                                                     \
    X(BXC_EMIT_E_UNSUPPORTED,E1101, "construct the C generator cannot lower")                 \
    X(BXC_EMIT_E_IO,         E1102, "cannot write an output file")                            \
    X(BXC_EMIT_E_CNAME,      E1103, "generated C name clashes with another or is reserved")   \
    X(BXC_EMIT_E_INTERNAL,   E1104, "internal error: the C generator met what the checker rejects (a bug of bextc)") \
    X(BXC_EMIT_W_UNLOWERED,  W1101, "construct not supported by generated code: it reports an error at run time")

#endif
