/* fuzz_conf.c - libFuzzer target: any config text must load or fail with a
 * "FILE:LINE: reason" message, and never crash, hang or leak
 * (core/rc_conf.c). A loaded config is then asked for boards by name. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rc_conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct rc_conf c; /* large: keep it off the stack */
    struct rc_error err;
    if (rc_conf_parse("fuzz.conf", (const char *)data, size, &c, &err) == 0) {
        for (size_t i = 0; i < c.nboards; i++)
            (void)rc_conf_board_find(&c, c.boards[i].name);
        (void)rc_conf_board_find(&c, "match:1842");
    } else if (!strstr(err.msg, "fuzz.conf:")) {
        abort(); /* every refusal names the file (and line) */
    }
    return 0;
}
