/* camclass — UTF-8 checks for text that reaches JSON (labels from a model's files, names). */
#ifndef CC_UTF8_H
#define CC_UTF8_H

#include <stdbool.h>

/* True when s is valid UTF-8 (no overlong forms, surrogates or code points above U+10FFFF). */
bool cc_utf8_valid(const char *s);

/* A malloc'd copy of s (NULL: "") with every byte that does not start valid UTF-8 replaced by
 * U+FFFD, so that JSON text stays valid whatever bytes a label file holds. NULL when out of
 * memory. */
char *cc_utf8_clean_dup(const char *s);

#endif
