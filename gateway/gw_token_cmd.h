/* gw_token_cmd.h - `rankcast token`: prints a signed HS256 token. */
#ifndef GW_TOKEN_CMD_H
#define GW_TOKEN_CMD_H

/* argv[0] is "token". Returns the process exit status (0, 1 on a bad
 * argument or no secret, 2 on a bad command line). */
int gw_token_cmd(int argc, char **argv);

#endif
