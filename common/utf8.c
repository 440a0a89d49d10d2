/* camclass — UTF-8 checks (see utf8.h). */
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

// Length of the valid UTF-8 sequence at s, or 0 when it is not one (overlong forms, surrogates
// and code points above U+10FFFF are invalid).
static size_t utf8_seq_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned cp;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0; // also stops at the terminating NUL
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

char *cc_utf8_clean_dup(const char *s)
{
    if (!s)
        s = "";
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s);
    char *out = malloc(len * 3 + 1); // each bad byte becomes 3 bytes
    if (!out)
        return NULL;
    size_t o = 0;
    while (*p) {
        size_t n = utf8_seq_len(p);
        if (n) {
            memcpy(out + o, p, n);
            o += n;
            p += n;
        } else {
            memcpy(out + o, "\xef\xbf\xbd", 3);
            o += 3;
            p++;
        }
    }
    out[o] = '\0';
    return out;
}

bool cc_utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t n = utf8_seq_len(p);
        if (!n)
            return false;
        p += n;
    }
    return true;
}
