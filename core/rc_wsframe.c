/* rc_wsframe.c - the client frame checker (rc_wsframe.h).
 *
 * A frame is: byte 0 (FIN, RSV1-3, opcode), byte 1 (MASK, 7-bit length),
 * 0, 2 or 8 bytes of extended length (network order), 4 bytes of mask key,
 * then the payload. One state per part; the header parts count down in
 * `left`, the payload in `len`.
 */
#include "rc_wsframe.h"

enum {
    ST_B0 = 0, /* the next byte starts a frame (a zeroed struct is here) */
    ST_B1,     /* MASK and the 7-bit length */
    ST_EXT,    /* extended length bytes */
    ST_MASK,   /* mask key bytes */
    ST_PAYLOAD,
    ST_FAILED,
};

#define FIN 0x80u
#define RSV 0x70u
#define RSV1 0x40u
#define OP_TEXT 0x1u
#define OP_BINARY 0x2u
#define OPCODE 0x0fu
#define CONTROL 0x08u
#define MASKED 0x80u
#define LEN7 0x7fu
#define CONTROL_MAX 125u

#define OP_CONT 0x0u
#define OP_PING 0x9u
#define OP_PONG 0xau

void rc_wsframe_init(struct rc_wsframe *s)
{
    *s = (struct rc_wsframe){.state = ST_B0};
}

void rc_wsframe_take_counts(struct rc_wsframe *s, uint32_t out[RC_WSFRAME_KINDS])
{
    for (int k = 0; k < RC_WSFRAME_KINDS; k++) {
        out[k] = s->counts[k];
        s->counts[k] = 0;
    }
}

int rc_wsframe_message_open(const struct rc_wsframe *s, uint32_t *id)
{
    if (id)
        *id = s->messages;
    return s->in_message || (s->state != ST_B0 && s->state != ST_FAILED && !s->control);
}

/* Counts a frame by its byte 0 (already checked) and follows the message
 * it may begin or end. Counters saturate: a reader that never takes
 * them loses nothing but their precision. */
static void count_frame(struct rc_wsframe *s, unsigned b)
{
    unsigned op = b & OPCODE;
    int kind = op == OP_CONT ? RC_WSFRAME_CONT : op == OP_PING ? RC_WSFRAME_PING : op == OP_PONG ? RC_WSFRAME_PONG : -1;
    if (kind >= 0 && s->counts[kind] != UINT32_MAX)
        s->counts[kind]++;
    if (op == OP_TEXT || op == OP_BINARY) {
        s->messages++;
        s->in_message = !(b & FIN);
    } else if (op == OP_CONT && (b & FIN)) {
        s->in_message = 0;
    }
}

void rc_wsframe_allow_compressed(struct rc_wsframe *s)
{
    s->rsv1_ok = 1;
}

size_t rc_wsframe_text_header(unsigned char out[RC_WSFRAME_HEADER_MAX], uint64_t len, int compressed)
{
    out[0] = (unsigned char)(FIN | OP_TEXT | (compressed ? RSV1 : 0));
    if (len < 126) {
        out[1] = (unsigned char)len;
        return 2;
    }
    if (len < 65536) {
        out[1] = 126;
        out[2] = (unsigned char)(len >> 8);
        out[3] = (unsigned char)len;
        return 4;
    }
    out[1] = 127;
    for (int i = 0; i < 8; i++)
        out[2 + i] = (unsigned char)(len >> (8 * (7 - i)));
    return 10;
}

static int reserved_opcode(unsigned op)
{
    return (op >= 3 && op <= 7) || op >= 11;
}

static size_t min_size(uint64_t a, size_t b)
{
    return a < b ? (size_t)a : b;
}

/* The RSV bits of byte 0 are allowed: none, or RSV1 alone on the first
 * frame of a data message when permessage-deflate was negotiated. */
static int rsv_allowed(const struct rc_wsframe *s, unsigned b)
{
    unsigned op = b & OPCODE;
    if (!(b & RSV))
        return 1;
    return s->rsv1_ok && (b & RSV) == RSV1 && (op == OP_TEXT || op == OP_BINARY);
}

/* Byte 0 or 1 or an extended length byte: returns 0, or -1 on a violation. */
static int header_byte(struct rc_wsframe *s, unsigned b)
{
    switch (s->state) {
    case ST_B0:
        if (!rsv_allowed(s, b) || reserved_opcode(b & OPCODE))
            return -1;
        s->control = (b & CONTROL) != 0;
        if (s->control && !(b & FIN))
            return -1;
        count_frame(s, b);
        s->state = ST_B1;
        return 0;
    case ST_B1:
        if (!(b & MASKED))
            return -1;
        s->len = b & LEN7;
        if (s->control && s->len > CONTROL_MAX)
            return -1; /* 126 and 127 announce more than 125 bytes too */
        if (s->len >= 126) {
            s->left = s->len == 126 ? 2 : 8;
            s->len = 0;
            s->state = ST_EXT;
        } else {
            s->left = 4;
            s->state = ST_MASK;
        }
        return 0;
    default: /* ST_EXT */
        if (s->left == 8 && (b & 0x80u))
            return -1; /* the most significant bit of a 64-bit length */
        s->len = (s->len << 8) | b;
        if (--s->left == 0) {
            s->left = 4;
            s->state = ST_MASK;
        }
        return 0;
    }
}

int rc_wsframe_feed(struct rc_wsframe *s, const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t k;
        switch (s->state) {
        case ST_B0:
        case ST_B1:
        case ST_EXT:
            if (header_byte(s, p[i++]) != 0) {
                s->state = ST_FAILED;
                return RC_WSFRAME_PROTOCOL_ERROR;
            }
            break;
        case ST_MASK:
            k = min_size(s->left, n - i);
            i += k;
            s->left = (uint8_t)(s->left - k);
            if (s->left == 0)
                s->state = s->len ? ST_PAYLOAD : ST_B0;
            break;
        case ST_PAYLOAD:
            k = min_size(s->len, n - i);
            i += k;
            s->len -= k;
            if (s->len == 0)
                s->state = ST_B0;
            break;
        default:
            return RC_WSFRAME_PROTOCOL_ERROR;
        }
    }
    return s->state == ST_FAILED ? RC_WSFRAME_PROTOCOL_ERROR : 0;
}
