/* rc_names.c - character-class checks for names, and a UTF-8 validator. */
#include "rc_names.h"

#include <stdint.h>

static int is_alnum(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int board_char(unsigned char c)
{
    return is_alnum(c) || c == '_' || c == '.' || c == ':' || c == '-';
}

static int member_char(unsigned char c)
{
    return board_char(c) || c == '@';
}

static int all_of(const char *s, size_t len, size_t max, int (*ok)(unsigned char))
{
    if (!s || len == 0 || len > max)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!ok((unsigned char)s[i]))
            return 0;
    return 1;
}

int rc_names_board_name_valid(const char *s, size_t len)
{
    return all_of(s, len, RC_BOARD_MAX, board_char);
}

int rc_names_member_name_valid(const char *s, size_t len)
{
    return all_of(s, len, RC_MEMBER_MAX, member_char);
}

static int req_char(unsigned char c)
{
    return c > 0x20 && c < 0x7f;
}

int rc_names_req_valid(const char *s, size_t len)
{
    return all_of(s, len, RC_REQ_MAX, req_char);
}

static int field_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

int rc_names_field_name_valid(const char *s, size_t len)
{
    return all_of(s, len, RC_FIELD_NAME_MAX, field_char) && s[0] >= 'a' && s[0] <= 'z';
}

int rc_names_board_template_valid(const char *s, size_t len)
{
    /* "match:*" is fine; a bare "*" would swallow every name and is refused. */
    return len >= 2 && s[len - 1] == '*' && rc_names_board_name_valid(s, len - 1);
}

int rc_names_utf8_valid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        unsigned char c = p[i];
        uint32_t cp;
        size_t n;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xe0) == 0xc0) {
            n = 1;
            cp = c & 0x1f;
        } else if ((c & 0xf0) == 0xe0) {
            n = 2;
            cp = c & 0x0f;
        } else if ((c & 0xf8) == 0xf0) {
            n = 3;
            cp = c & 0x07;
        } else {
            return 0;
        }
        if (len - i <= n)
            return 0;
        for (size_t k = 1; k <= n; k++) {
            if ((p[i + k] & 0xc0) != 0x80)
                return 0;
            cp = (cp << 6) | (p[i + k] & 0x3f);
        }
        if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000))
            return 0; /* overlong */
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        i += n + 1;
    }
    return 1;
}
