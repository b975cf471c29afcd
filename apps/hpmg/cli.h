/* The command line's two parsers (main.c: finite elements, cli_fd.c: finite
 * differences) and what they share. */
#ifndef HPMG_CLI_H
#define HPMG_CLI_H

/* hpmg solve --disc fd ...: returns the exit status */
int hpmg_cli_fd(int argc, char **argv);
/* hpmg --version: the library, the CPU kernel variant in use, CUDA */
void hpmg_cli_print_version(void);

#endif
