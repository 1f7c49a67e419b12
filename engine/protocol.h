/*
 * protocol.h - the engine's text front ends: UCI (as Pikafish speaks it for
 * Xiangqi) and UCCI (ElephantEye's protocol).  The first `uci` or `ucci`
 * command picks the dialect; before either, UCI is assumed.
 *
 * Bad input of any kind gets one `info string error: ...` line and leaves
 * the session's state (position, options, running search) as it was.
 */
#ifndef XQF_PROTOCOL_H
#define XQF_PROTOCOL_H

#include <stdio.h>

/* Reads commands from in until `quit` or end of input. Returns 0, or 1 when the engine cannot start. */
int protocol_run(FILE *in, FILE *out);

#endif
