/* gw_archive.c - PLACEHOLDER being replaced by the archive (see gw_archive.h). */
#include "gw_archive.h"
#include "rc_err.h"
int gw_archive_start(struct gw_app *app) { (void)app; return 0; }
void gw_archive_stop(struct gw_app *app) { (void)app; }
int gw_archive_read(struct gw_app *app, const struct rc_board *b, const char *board, const char *period,
                    const struct gw_read_spec *spec, gw_read_cb *cb, void *privdata)
{ (void)app; (void)b; (void)board; (void)period; (void)spec; (void)cb; (void)privdata; return RC_E_NOT_FOUND; }
