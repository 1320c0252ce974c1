/*
 * cmd_stubs.c - TEMPORARY: subcommands not built yet say so and fail.
 * Each owner deletes its line here when its cmd_*.c lands.
 */
#include "config.h"

#include "cmd.h"

#define NOT_YET(fn, name) \
int fn(int argc, char **argv, const struct cmd_ctx *ctx) \
{ (void)argc; (void)argv; (void)ctx; \
  cmd_err(name, "not implemented yet"); return EXIT_CMD_FAIL; }

