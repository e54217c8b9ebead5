/*
 * tools/tools.h — what the CLI's command files share: the commands kept
 * in their own files (tools/tune.c, tools/bundle.c) and the JSON string
 * writer of tools/tilec.c.
 */
#ifndef TILEC_TOOLS_TOOLS_H
#define TILEC_TOOLS_TOOLS_H

#include <stdio.h>

/* `tilec tune ...` and `tilec bundle ...`; argv[0] is the command name. */
int tilec_cli_tune(int argc, char **argv);
int tilec_cli_bundle(int argc, char **argv);
/* s as a JSON string (a byte that is not UTF-8 becomes U+FFFD). */
void tilec_cli_json_string(FILE *f, const char *s);

#endif
