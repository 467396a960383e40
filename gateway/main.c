/* main.c - the rankcast command.
 *
 * Today it validates configs: `rankcast --check-config FILE` exits 0 when FILE
 * loads (boards, layouts that fit 53 bits, every key known) and 1 with
 * "FILE:LINE: reason" otherwise. Serving WebSocket/HTTP is not built yet: the
 * command says so and exits 2 rather than pretend.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_conf.h"

static int usage(void)
{
    fprintf(stderr, "usage: rankcast --check-config FILE\n"
                    "       rankcast [--config FILE]   (serving is not built yet)\n");
    return 2;
}

static int check_config(const char *path)
{
    struct rc_conf *c = malloc(sizeof *c);
    struct rc_error err = {0, ""};
    if (!c) {
        fprintf(stderr, "rankcast: out of memory\n");
        return 1;
    }
    int rc = gw_conf_load(path, c, &err);
    if (rc)
        fprintf(stderr, "rankcast: %s\n", err.msg);
    else
        printf("%s: ok, %zu boards\n", path, c->nboards);
    free(c);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--check-config") == 0)
        return check_config(argv[2]);
    if (argc == 1 || (argc == 3 && strcmp(argv[1], "--config") == 0)) {
        const char *path = argc == 3 ? argv[2] : "conf/rankcast.conf";
        int rc = check_config(path);
        if (rc)
            return rc;
        fprintf(stderr, "rankcast: the WebSocket/HTTP gateway is not built yet; "
                        "only --check-config works in this version\n");
        return 2;
    }
    return usage();
}
