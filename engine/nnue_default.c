/*
 * The net compiled into the program (cmake -DXQF_DEFAULT_NET=FILE).
 *
 * The file is embedded with the assembler's .incbin rather than a
 * generated C array: a 3.9 MB net as a C initializer is about 20 MB of
 * source text that CMake has to hex-dump and the compiler to parse (slow,
 * and hundreds of MB of compiler memory), while .incbin copies the bytes
 * as they are.  GNU as and clang's integrated assembler both have it; the
 * symbol names assume an ELF target (Linux, the BSDs), which is where the
 * engine is built.  CMake makes this file depend on the net, so a changed
 * net rebuilds it.
 */
#include "nnue.h"

#ifdef XQF_DEFAULT_NET_FILE
__asm__(".section .rodata\n"
        ".balign 64\n"
        ".globl xqf_default_net_start\n"
        ".hidden xqf_default_net_start\n"
        "xqf_default_net_start:\n"
        ".incbin \"" XQF_DEFAULT_NET_FILE "\"\n"
        ".globl xqf_default_net_end\n"
        ".hidden xqf_default_net_end\n"
        "xqf_default_net_end:\n"
        ".previous\n");
extern const uint8_t xqf_default_net_start[], xqf_default_net_end[];
#endif

const uint8_t *nnue_default_data(size_t *size)
{
#ifdef XQF_DEFAULT_NET_FILE
    *size = (size_t)(xqf_default_net_end - xqf_default_net_start);
    return xqf_default_net_start;
#else
    *size = 0;
    return NULL;
#endif
}
