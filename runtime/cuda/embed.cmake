# cmake -DIN=<file> -DOUT=<file.c> -DSYM=<name> -P embed.cmake
# Writes `const char SYM[] = {...bytes..., 0};`: the text of IN, byte for
# byte (hex, so no escaping can change it), as a C string.
file(READ "${IN}" _hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _bytes "${_hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)"
  "\\1\n" _bytes "${_bytes}")
file(WRITE "${OUT}.tmp"
  "/* generated from ${IN} by runtime/cuda/embed.cmake: do not edit */\n"
  "#include \"bxcu.h\"\n"
  "const char ${SYM}[] = {\n${_bytes}0};\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
