/* gw_decay.c - PLACEHOLDER being replaced by the decay job (see gw_decay.h). */
#include "gw_decay.h"
int gw_decay_start(struct gw_app *app) { (void)app; return 0; }
void gw_decay_stop(struct gw_app *app) { (void)app; }
