/* gw_conf.c - config file I/O (the parsing itself is core/rc_conf.c). */
#include "base/gw_conf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONF_FILE_MAX (4u << 20)

int gw_conf_load(const char *path, struct rc_conf *c, struct rc_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return rc_err_set(err, RC_E_BAD_REQUEST, "%s: %s", path, strerror(errno));
    char *text = malloc(CONF_FILE_MAX);
    if (!text) {
        fclose(f);
        return rc_err_set(err, RC_E_INTERNAL, "%s: out of memory", path);
    }
    size_t len = fread(text, 1, CONF_FILE_MAX, f);
    int failed = ferror(f), too_big = !feof(f);
    fclose(f);
    int rc;
    if (failed)
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "%s: read error", path);
    else if (too_big)
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "%s: larger than %u bytes", path, CONF_FILE_MAX);
    else
        rc = rc_conf_parse(path, text, len, c, err);
    free(text);
    return rc;
}
