/* camclass — the HTTP service's answers through libmicrohttpd, each counted for /metrics (see
 * http_service.h). */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "http_service.h"

/* Queues status with a body of size bytes of type (taken: freed by libmicrohttpd; NULL: out of
 * memory) and counts it for /metrics. */
enum MHD_Result cc_http_send_bytes(struct cc_http *h, const struct cc_http_req *rq,
                                   struct MHD_Connection *c, int status, void *body, size_t size,
                                   const char *type, const char *header, const char *value)
{
    char *json = body;
    if (!json) {
        status = 500;
        type = "application/json";
        json = strdup("{\"error\":\"out of memory\",\"status\":500}\n");
        if (!json)
            return MHD_NO;
        size = strlen(json);
    }
    cc_metrics_request(h->metrics, rq->endpoint, status,
                       rq->endpoint == CC_METRICS_PREDICT && status == 200
                           ? (double)(cc_now_ns() - rq->body_ns) / 1e9
                           : -1);
    struct MHD_Response *r = MHD_create_response_from_buffer(size, json, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(json);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (header)
        MHD_add_response_header(r, header, value);
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

/* send_bytes with a text body (its length from strlen). */
enum MHD_Result cc_http_send_body(struct cc_http *h, const struct cc_http_req *rq,
                                  struct MHD_Connection *c, int status, char *text,
                                  const char *type, const char *header, const char *value)
{
    return cc_http_send_bytes(h, rq, c, status, text, text ? strlen(text) : 0, type, header, value);
}

enum MHD_Result cc_http_send_error_(struct cc_http *h, const struct cc_http_req *rq,
                                    struct MHD_Connection *c, int status, const char *msg,
                                    const char *header, const char *value)
{
    struct cc_predict_answer a = cc_predict_error(status, msg);
    return send_json(c, a.status, a.json, header, value);
}

char *cc_http_memdup(const char *p, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, p, n);
        d[n] = '\0';
    }
    return d;
}
