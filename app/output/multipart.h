/* camclass — multipart/form-data (RFC 7578 on RFC 2046 section 5.1): the boundary a
 * Content-Type names and the field that holds the image in a whole body, without an HTTP
 * library. POST /predict's body is bounded (--serve-max-body) and kept whole anyway, so it is
 * parsed once it is in, where the error can name what is wrong with the form.
 *
 *   char boundary[CC_MULTIPART_BOUNDARY_MAX + 1];
 *   if (!cc_multipart_boundary(content_type, boundary, msg, sizeof(msg))) 400 with msg;
 *   ... the body is in ...
 *   status = cc_multipart_find(body, size, boundary, names, &off, &len, msg, sizeof(msg));
 *
 * libmicrohttpd's post processor took everything after "boundary=" as the boundary
 * ("XyZ; charset=utf-8"), found only the lower-case parameter name, and blamed a form without
 * its closing delimiter on the image.
 *
 * Threads: none kept; pure functions of what they are given.
 */
#ifndef CC_MULTIPART_H
#define CC_MULTIPART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* RFC 2046: a boundary is 1 to 70 characters. */
enum { CC_MULTIPART_BOUNDARY_MAX = 70 };

/* The boundary parameter of a Content-Type "multipart/form-data; ..." (the type itself is the
 * caller's check): parameter names in any case, whitespace around ';' and '=', the value a
 * token or a quoted string (backslash escapes), other parameters (charset=...) before or after
 * it ignored. True with the boundary in out; false with the error line in msg when it is
 * missing, empty, longer than 70 characters or has characters RFC 2046 does not allow. */
bool cc_multipart_boundary(const char *content_type, char out[CC_MULTIPART_BOUNDARY_MAX + 1],
                           char *msg, size_t msg_size);

/* Finds, in the whole body (size bytes) delimited by boundary, the first part whose
 * Content-Disposition name is one of names (NULL-terminated list, compared exactly) and that
 * has bytes: 0 with its bytes at body + *off, *len bytes. Else 400 with the error line in msg:
 * no delimiter, a part without its header end, a body that ends before its closing delimiter
 * ("--BOUNDARY--"), or no such field (or only empty ones; the message says which, naming
 * names[0]). A preamble before the first delimiter and an epilogue after the last are
 * ignored, as RFC 2046 says. */
int cc_multipart_find(const uint8_t *body, size_t size, const char *boundary,
                      const char *const *names, size_t *off, size_t *len, char *msg,
                      size_t msg_size);

#endif
