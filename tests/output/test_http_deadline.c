/* camclass — the deadline for a request's headers (app/output/http_deadline.c), on socket pairs
 * standing for HTTP connections: one that never gets its headers is shut down (its peer reads
 * the end) no sooner than the deadline; one whose request is being answered is left alone
 * however long that takes, and watched again from its request's end; one removed is never
 * touched; destroy wakes the thread at once. The server with real clients trickling headers is
 * test_serve.py's. Times: a 200 ms deadline, waits bounded far above it for a loaded machine;
 * only "not before the deadline" is a lower bound, which lateness cannot break. */
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "http_deadline.h"
#include "testutil.h"

#define LIMIT_NS 200000000LL
#define BOUND_MS 20000 // only a broken deadline waits this long

static atomic_int expired;
static atomic_llong told_limit; // checked on the main thread: CHECK is not thread-safe

static void on_expire(void *ctx, int n, int64_t limit_ns)
{
    (void)ctx;
    atomic_store(&told_limit, (long long)limit_ns);
    atomic_fetch_add(&expired, n);
}

/* Whether the peer of a watched socket reads its end (shut down) within ms. */
static bool ends_within(int peer, int ms)
{
    struct pollfd p = {.fd = peer, .events = POLLIN};
    if (poll(&p, 1, ms) != 1)
        return false;
    char c;
    return read(peer, &c, 1) == 0;
}

/* Whether on_expire has told n expiries within BOUND_MS (it is called just after the sockets
 * are shut down, so their peers may see the end first). */
static bool expired_reaches(int n)
{
    for (int i = 0; i < BOUND_MS / 10 && atomic_load(&expired) < n; i++)
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    return atomic_load(&expired) == n;
}

static double since_ms(int64_t t0)
{
    return (double)(cc_now_ns() - t0) / 1e6;
}

int main(void)
{
    struct cc_error err = {0};
    struct cc_http_deadline *d = cc_http_deadline_create(LIMIT_NS, on_expire, NULL, &err);
    CHECKF(d != NULL, "create: %s", err.msg);
    if (!d)
        return tu_exit_code();
    int idle[2], busy[2], gone[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, idle) == 0);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, busy) == 0);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, gone) == 0);

    int64_t t0 = cc_now_ns();
    struct cc_http_watch *wi = cc_http_deadline_add(d, idle[0]);
    struct cc_http_watch *wb = cc_http_deadline_add(d, busy[0]);
    struct cc_http_watch *wg = cc_http_deadline_add(d, gone[0]);
    CHECK(wi && wb && wg);
    cc_http_deadline_begin(d, wb); // its headers are in: answered for as long as it takes
    cc_http_deadline_remove(d, wg);

    // No headers: shut down, and not before the deadline.
    bool ended = ends_within(idle[1], BOUND_MS);
    double waited = since_ms(t0);
    CHECKF(ended && waited >= LIMIT_NS / 1e6,
           "no headers: shut down after %.0f ms (deadline %lld ms; ended %d)", waited,
           LIMIT_NS / 1000000, ended);
    CHECKF(expired_reaches(1), "one expiry told (%d)", atomic_load(&expired));

    // Being answered: left alone for 3 deadlines; then watched from its request's end.
    CHECKF(!ends_within(busy[1], 3 * LIMIT_NS / 1000000), "a request being answered is not cut");
    int64_t t1 = cc_now_ns();
    cc_http_deadline_end(d, wb);
    ended = ends_within(busy[1], BOUND_MS);
    waited = since_ms(t1);
    CHECKF(ended && waited >= LIMIT_NS / 1e6,
           "after its request: shut down %.0f ms after its end (ended %d)", waited, ended);
    CHECKF(expired_reaches(2), "two expiries told (%d)", atomic_load(&expired));
    CHECKF(atomic_load(&told_limit) == LIMIT_NS, "on_expire is told the limit (%lld)",
           atomic_load(&told_limit));

    // Removed before its deadline: still open, writable both ways.
    CHECKF(!ends_within(gone[1], 2 * LIMIT_NS / 1000000), "a removed connection is not touched");
    CHECK(write(gone[0], "x", 1) == 1 && write(gone[1], "y", 1) == 1);
    cc_http_deadline_remove(d, wi);
    cc_http_deadline_remove(d, wb);
    cc_http_deadline_destroy(d);

    // destroy wakes a thread sleeping towards a far deadline (60 s) at once.
    d = cc_http_deadline_create(60 * 1000000000LL, on_expire, NULL, &err);
    CHECKF(d != NULL, "create: %s", err.msg);
    if (d) {
        cc_http_deadline_add(d, idle[0]); // left for destroy to remove
        int64_t t2 = cc_now_ns();
        cc_http_deadline_destroy(d);
        CHECKF(since_ms(t2) < 5000, "destroy returns at once (%.0f ms)", since_ms(t2));
    }
    for (int i = 0; i < 2; i++) {
        close(idle[i]);
        close(busy[i]);
        close(gone[i]);
    }
    return tu_exit_code();
}
