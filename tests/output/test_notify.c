/* camclass — tests of the sd_notify wrapper (suite 'app').
 *
 * Plays systemd's part: binds a datagram socket, points NOTIFY_SOCKET at it and checks that each
 * cc_notify_* call delivers exactly the expected message; then the watchdog interval from
 * WATCHDOG_USEC/WATCHDOG_PID, and the no-op and error cases.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "notify.h"
#include "testutil.h"

/* ---------------------------------------------------------------------------------------------
 * A stand-in for systemd's notification socket
 * ------------------------------------------------------------------------------------------- */

// Binds an AF_UNIX datagram socket at path ('@' first: abstract). Returns the fd or -1.
static int listen_at(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    if (n >= sizeof(sa.sun_path)) {
        close(fd);
        return -1;
    }
    memcpy(sa.sun_path, path, n);
    if (path[0] == '@')
        sa.sun_path[0] = '\0';
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    struct timeval tv = {.tv_sec = 2}; // a missing message fails the check, never hangs
    if (bind(fd, (struct sockaddr *)&sa, len) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

// The next datagram as a string ("" on timeout).
static const char *next_message(int fd, char *buf, size_t size)
{
    ssize_t n = recv(fd, buf, size - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

// True when no datagram is waiting.
static bool nothing_waiting(int fd)
{
    char c;
    return recv(fd, &c, 1, MSG_DONTWAIT) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

#define CHECK_MSG(fd, expected)                                                                    \
    do {                                                                                           \
        char buf_[1024];                                                                           \
        const char *got_ = next_message((fd), buf_, sizeof(buf_));                                 \
        CHECKF(strcmp(got_, (expected)) == 0, "got \"%s\", expected \"%s\"", got_, (expected));    \
    } while (0)

/* ---------------------------------------------------------------------------------------------
 * Tests
 * ------------------------------------------------------------------------------------------- */

// Not under systemd: every call is a quiet success, the watchdog is off.
static void test_no_systemd(void)
{
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
    CHECK(cc_notify_ready());
    CHECK(cc_notify_watchdog());
    CHECK(cc_notify_status("frames %d", 1));
    CHECK(cc_notify_stopping());
    CHECK(cc_notify_watchdog_interval_us() == 0);
}

static void test_messages(const char *sock_path)
{
    int fd = listen_at(sock_path);
    CHECKF(fd >= 0, "bind %s: %s", sock_path, strerror(errno));
    if (fd < 0)
        return;
    setenv("NOTIFY_SOCKET", sock_path, 1);

    CHECK(cc_notify_ready());
    CHECK_MSG(fd, "READY=1");
    CHECK(cc_notify_watchdog());
    CHECK_MSG(fd, "WATCHDOG=1");
    CHECK(cc_notify_watchdog());
    CHECK_MSG(fd, "WATCHDOG=1");
    CHECK(cc_notify_status("%s on %s: %.1f fps", "vulkan", "/dev/video0", 29.97));
    CHECK_MSG(fd, "STATUS=vulkan on /dev/video0: 30.0 fps");
    // A newline would end the status early (and start a new assignment): it becomes a space.
    CHECK(cc_notify_status("two\nlines"));
    CHECK_MSG(fd, "STATUS=two lines");
    // Long text is cut at 255 bytes, not sent beyond the buffer.
    char longtext[600];
    memset(longtext, 'x', sizeof(longtext) - 1);
    longtext[sizeof(longtext) - 1] = '\0';
    CHECK(cc_notify_status("%s", longtext));
    {
        char buf[1024];
        const char *got = next_message(fd, buf, sizeof(buf));
        CHECKF(strncmp(got, "STATUS=xxx", 10) == 0 && strlen(got) == 7 + 255,
               "long status: %zu bytes", strlen(got));
    }
    CHECK(cc_notify_stopping());
    CHECK_MSG(fd, "STOPPING=1");
    CHECK(nothing_waiting(fd));

    close(fd);
    unsetenv("NOTIFY_SOCKET");
}

// NOTIFY_SOCKET set but nobody listening: false with errno set, and no crash.
static void test_send_error(const char *dead_path)
{
    setenv("NOTIFY_SOCKET", dead_path, 1);
    errno = 0;
    CHECK(!cc_notify_ready());
    CHECKF(errno != 0, "errno %d", errno);
    CHECK(!cc_notify_watchdog());
    unsetenv("NOTIFY_SOCKET");
}

static void test_watchdog_interval(void)
{
    char pid[32];
    unsetenv("WATCHDOG_PID");
    setenv("WATCHDOG_USEC", "60000000", 1); // WatchdogSec=60s
    CHECKF(cc_notify_watchdog_interval_us() == 30000000, "%llu",
           (unsigned long long)cc_notify_watchdog_interval_us());
    snprintf(pid, sizeof(pid), "%ld", (long)getpid());
    setenv("WATCHDOG_PID", pid, 1); // meant for us
    CHECK(cc_notify_watchdog_interval_us() == 30000000);
    snprintf(pid, sizeof(pid), "%ld", (long)getpid() + 1);
    setenv("WATCHDOG_PID", pid, 1); // meant for another process (e.g. our parent)
    CHECK(cc_notify_watchdog_interval_us() == 0);
    unsetenv("WATCHDOG_PID");
    setenv("WATCHDOG_USEC", "not-a-number", 1);
    CHECK(cc_notify_watchdog_interval_us() == 0);
    setenv("WATCHDOG_USEC", "0", 1);
    CHECK(cc_notify_watchdog_interval_us() == 0);
    unsetenv("WATCHDOG_USEC");
    CHECK(cc_notify_watchdog_interval_us() == 0);
}

int main(void)
{
    char dir[] = "/tmp/camclass-notify-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[256], dead[256], abstract[128];
    snprintf(path, sizeof(path), "%s/notify", dir);
    snprintf(dead, sizeof(dead), "%s/nobody", dir);
    snprintf(abstract, sizeof(abstract), "@camclass-test-notify-%ld", (long)getpid());

    test_no_systemd();
    test_messages(path);     // a path socket, as systemd uses (/run/systemd/notify)
    test_messages(abstract); // an abstract one, which sd_notify also accepts
    test_send_error(dead);
    test_watchdog_interval();

    unlink(path);
    rmdir(dir);
    return tu_exit_code();
}
