/* camclass — a deadline for the headers of each HTTP request (see http_deadline.h).
 *
 * The watched connections are a list under one lock. The thread scans it, shuts down the
 * late ones, and sleeps until the earliest deadline left; a connection added or ended later
 * has a later deadline than any the thread already sleeps towards, so only destroy wakes it.
 * A socket is shut down only under the lock and only while its connection is on the list:
 * libmicrohttpd removes it (MHD_CONNECTION_NOTIFY_CLOSED) before it closes the descriptor, so
 * the number cannot have been reused by another file by then.
 */
#include "http_deadline.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "clock.h"

struct cc_http_watch {
    struct cc_http_watch *prev, *next;
    int fd;
    bool busy;        // its request's headers are in, its answer not yet sent: not watched
    bool expired;     // shut down; libmicrohttpd is closing it
    int64_t since_ns; // when it began waiting for a request's headers
};

struct cc_http_deadline {
    pthread_mutex_t lock;
    pthread_cond_t wake; // destroy
    pthread_t thread;
    bool stopping;
    int64_t limit_ns;
    struct cc_http_watch *head;
    void (*on_expire)(void *ctx, int n, int64_t limit_ns);
    void *ctx;
};

/* Under the lock: shuts down the connections past their deadline; returns how many, and in
 * *next the earliest deadline still to come (now + limit when there is none). */
static int expire(struct cc_http_deadline *d, int64_t now, int64_t *next)
{
    int n = 0;
    *next = now + d->limit_ns;
    for (struct cc_http_watch *w = d->head; w; w = w->next) {
        if (w->busy || w->expired)
            continue;
        int64_t due = w->since_ns + d->limit_ns;
        if (due <= now) {
            shutdown(w->fd, SHUT_RDWR);
            w->expired = true;
            n++;
        } else if (due < *next) {
            *next = due;
        }
    }
    return n;
}

static void *watch_thread(void *arg)
{
    struct cc_http_deadline *d = arg;
    pthread_mutex_lock(&d->lock);
    while (!d->stopping) {
        int64_t next;
        int n = expire(d, cc_now_ns(), &next);
        if (n) {
            pthread_mutex_unlock(&d->lock);
            d->on_expire(d->ctx, n, d->limit_ns);
            pthread_mutex_lock(&d->lock);
            continue;
        }
        struct timespec until = {(time_t)(next / 1000000000), (long)(next % 1000000000)};
        pthread_cond_timedwait(&d->wake, &d->lock, &until);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

struct cc_http_deadline *
cc_http_deadline_create(int64_t limit_ns, void (*on_expire)(void *ctx, int n, int64_t limit_ns),
                        void *ctx, struct cc_error *err)
{
    struct cc_http_deadline *d = calloc(1, sizeof(*d));
    if (!d) {
        cc_error_set(err, "--serve: out of memory");
        return NULL;
    }
    d->limit_ns = limit_ns;
    d->on_expire = on_expire;
    d->ctx = ctx;
    pthread_mutex_init(&d->lock, NULL);
    cc_cond_init_monotonic(&d->wake);
    int e = pthread_create(&d->thread, NULL, watch_thread, d);
    if (e) {
        cc_error_set(err, "--serve: cannot start a thread: %s", strerror(e));
        pthread_cond_destroy(&d->wake);
        pthread_mutex_destroy(&d->lock);
        free(d);
        return NULL;
    }
    return d;
}

struct cc_http_watch *cc_http_deadline_add(struct cc_http_deadline *d, int fd)
{
    struct cc_http_watch *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->fd = fd;
    pthread_mutex_lock(&d->lock);
    w->since_ns = cc_now_ns();
    w->next = d->head;
    if (d->head)
        d->head->prev = w;
    d->head = w;
    pthread_mutex_unlock(&d->lock);
    return w;
}

void cc_http_deadline_begin(struct cc_http_deadline *d, struct cc_http_watch *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&d->lock);
    w->busy = true;
    pthread_mutex_unlock(&d->lock);
}

void cc_http_deadline_end(struct cc_http_deadline *d, struct cc_http_watch *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&d->lock);
    w->busy = false;
    w->since_ns = cc_now_ns();
    pthread_mutex_unlock(&d->lock);
}

void cc_http_deadline_remove(struct cc_http_deadline *d, struct cc_http_watch *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&d->lock);
    if (w->prev)
        w->prev->next = w->next;
    else
        d->head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    pthread_mutex_unlock(&d->lock);
    free(w);
}

void cc_http_deadline_destroy(struct cc_http_deadline *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->lock);
    d->stopping = true;
    pthread_cond_signal(&d->wake);
    pthread_mutex_unlock(&d->lock);
    pthread_join(d->thread, NULL);
    while (d->head) // connections the caller did not remove (it should have)
        cc_http_deadline_remove(d, d->head);
    pthread_cond_destroy(&d->wake);
    pthread_mutex_destroy(&d->lock);
    free(d);
}
