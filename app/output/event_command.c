/* camclass — the on-event command (see event_command.h). */
#include "event_command.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "notice.h"

extern char **environ;

#define KILL_GRACE_S 2.0 // SIGTERM, then SIGKILL this much later
#define REAP_POLL_MS 20  // how often the waiter looks at a running child
#define N_OURS 7         // CAMCLASS_* variables we set

struct cc_event_command {
    char *program, *camera; // owned copies
    double timeout_s;
    void (*notice)(void *ctx, const char *line);
    void *notice_ctx;

    pthread_t waiter;
    bool waiter_started;
    pthread_mutex_t lock; // guards the fields below
    pthread_cond_t wake;  // child set, or quit
    pid_t child;          // the running program; 0 when none (cleared by the waiter)
    char what[160];       // its event, for the notice: "start of \"cat\""
    bool quit;
    unsigned long skipped; // events not passed because one was running
};

static void say(const struct cc_event_command *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const struct cc_event_command *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cc_vnotice(c->notice, c->notice_ctx, fmt, ap);
    va_end(ap);
}

// --- Finding the program ------------------------------------------------------------------

static bool executable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static bool check_program(const char *program, struct cc_error *err)
{
    if (!program || !program[0])
        return cc_error_set(err, "--on-event: give a program to run");
    if (strchr(program, '/')) {
        if (executable_file(program))
            return true;
        return cc_error_set(err, "--on-event %s: %s; give an executable file (chmod +x)", program,
                            access(program, F_OK) == 0 ? "not an executable file" : "no such file");
    }
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        char full[4096];
        if (snprintf(full, sizeof(full), "%.*s/%s", (int)n, n ? p : ".", program) <
                (int)sizeof(full) &&
            executable_file(full))
            return true;
        p += n + (p[n] == ':');
    }
    return cc_error_set(err, "--on-event %s: not found in PATH; give the program's full path",
                        program);
}

// --- Reaping ----------------------------------------------------------------------------------

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

// Waits for pid, sending its group SIGTERM at timeout and SIGKILL after the grace. Polls: the
// child is one short program at a time, and polling needs no signal handler of ours.
static int reap(const struct cc_event_command *c, pid_t pid, bool *timed_out, double *secs)
{
    int64_t t0 = cc_now_ns();
    int status = 0;
    bool termed = false, killed = false;
    *timed_out = false;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            break;
        double s = (double)(cc_now_ns() - t0) / 1e9;
        if (!termed && s >= c->timeout_s) {
            kill(-pid, SIGTERM);
            termed = *timed_out = true;
        } else if (termed && !killed && s >= c->timeout_s + KILL_GRACE_S) {
            kill(-pid, SIGKILL);
            killed = true;
        }
        sleep_ms(REAP_POLL_MS);
    }
    *secs = (double)(cc_now_ns() - t0) / 1e9;
    return status;
}

static void report_end(const struct cc_event_command *c, const char *what, int status,
                       bool timed_out, double secs)
{
    if (timed_out)
        say(c, "on-event %s (%s): still running after %g s; stopped (SIGTERM, then SIGKILL)",
            c->program, what, c->timeout_s);
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        say(c, "on-event %s (%s): exit status 0 after %.2f s", c->program, what, secs);
    else if (WIFEXITED(status))
        say(c, "on-event %s (%s): exit status %d after %.2f s", c->program, what,
            WEXITSTATUS(status), secs);
    else if (WIFSIGNALED(status))
        say(c, "on-event %s (%s): killed by signal %d (%s)", c->program, what, WTERMSIG(status),
            strsignal(WTERMSIG(status)));
}

static void *waiter_main(void *arg)
{
    struct cc_event_command *c = arg;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        while (!c->child && !c->quit)
            pthread_cond_wait(&c->wake, &c->lock);
        if (!c->child)
            break; // quit, nothing running
        pid_t pid = c->child;
        char what[sizeof(c->what)];
        memcpy(what, c->what, sizeof(what));
        pthread_mutex_unlock(&c->lock);
        bool timed_out;
        double secs;
        int status = reap(c, pid, &timed_out, &secs);
        report_end(c, what, status, timed_out, secs);
        pthread_mutex_lock(&c->lock);
        c->child = 0;
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

// --- Create / destroy ---------------------------------------------------------------------------

struct cc_event_command *cc_event_command_create(const struct cc_event_command_config *cfg,
                                                 struct cc_error *err)
{
    if (!check_program(cfg->program, err))
        return NULL;
    if (!(cfg->timeout_s > 0 && cfg->timeout_s <= 86400)) {
        cc_error_set(err, "--on-event-timeout %g: give 0 < seconds <= 86400", cfg->timeout_s);
        return NULL;
    }
    struct cc_event_command *c = calloc(1, sizeof(*c));
    if (c) {
        pthread_mutex_init(&c->lock, NULL);
        pthread_cond_init(&c->wake, NULL);
    }
    if (!c || !(c->program = strdup(cfg->program)) ||
        !(c->camera = strdup(cfg->camera ? cfg->camera : ""))) {
        cc_error_set(err, "--on-event: out of memory");
        goto error;
    }
    c->timeout_s = cfg->timeout_s;
    c->notice = cfg->notice;
    c->notice_ctx = cfg->notice_ctx;
    int e = pthread_create(&c->waiter, NULL, waiter_main, c);
    if (e) {
        cc_error_set(err, "--on-event: pthread_create failed: %s", strerror(e));
        goto error;
    }
    c->waiter_started = true;
    return c;

error:
    cc_event_command_destroy(c);
    return NULL;
}

void cc_event_command_destroy(struct cc_event_command *c)
{
    if (!c)
        return;
    if (c->waiter_started) {
        pthread_mutex_lock(&c->lock);
        c->quit = true;
        pthread_cond_signal(&c->wake);
        pthread_mutex_unlock(&c->lock);
        pthread_join(c->waiter, NULL);
    }
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->wake);
    free(c->program);
    free(c->camera);
    free(c);
}

// --- Running ------------------------------------------------------------------------------------

// environ without its CAMCLASS_* entries, then ours (vars: N_OURS strings, NULL = unset).
static char **make_env(char *const *vars)
{
    size_t n = 0;
    while (environ && environ[n])
        n++;
    char **env = calloc(n + N_OURS + 1, sizeof(*env));
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "CAMCLASS_", 9) != 0)
            env[k++] = environ[i];
    for (int i = 0; i < N_OURS; i++)
        if (vars[i])
            env[k++] = vars[i];
    return env;
}

static void iso_time(char *buf, size_t size)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct tm tm;
    gmtime_r(&now.tv_sec, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

// posix_spawnp the program with env; its own process group, default signals, stdin /dev/null,
// stdout to stderr. Returns errno's value, 0 on success.
static int spawn(const struct cc_event_command *c, char **env, pid_t *pid)
{
    posix_spawnattr_t at;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_init(&fa);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all); // SIGPIPE is ignored in camclass, not in it
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
    char *argv[] = {c->program, NULL};
    int e = posix_spawnp(pid, c->program, &fa, &at, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    return e;
}

enum cc_event_run cc_event_command_run(struct cc_event_command *c, const struct cc_event_info *ev)
{
    char what[sizeof(c->what)];
    snprintf(what, sizeof(what), "%s of \"%s\"", ev->start ? "start" : "end",
             ev->label ? ev->label : "");
    pthread_mutex_lock(&c->lock);
    bool busy = c->child != 0;
    unsigned long skipped = busy ? ++c->skipped : c->skipped;
    pthread_mutex_unlock(&c->lock);
    if (busy) {
        say(c, "on-event %s: still running; the %s was not passed (%lu so far)", c->program, what,
            skipped);
        return CC_EVENT_RUN_BUSY;
    }
    char v[N_OURS][320], t[40];
    char *vars[N_OURS] = {NULL};
    iso_time(t, sizeof(t));
    snprintf(v[0], sizeof(v[0]), "CAMCLASS_EVENT=%s", ev->start ? "start" : "end");
    snprintf(v[1], sizeof(v[1]), "CAMCLASS_LABEL=%s", ev->label ? ev->label : "");
    snprintf(v[2], sizeof(v[2]), "CAMCLASS_SCORE=%.6f", ev->score);
    snprintf(v[3], sizeof(v[3]), "CAMCLASS_PREVIOUS=%s", ev->previous ? ev->previous : "");
    snprintf(v[4], sizeof(v[4]), "CAMCLASS_CAMERA=%s", c->camera);
    snprintf(v[5], sizeof(v[5]), "CAMCLASS_TIME=%s", t);
    snprintf(v[6], sizeof(v[6]), "CAMCLASS_SNAPSHOT=%s", ev->snapshot ? ev->snapshot : "");
    for (int i = 0; i < N_OURS; i++)
        vars[i] = (i == 3 && !ev->previous) || (i == 6 && !ev->snapshot) ? NULL : v[i];
    char **env = make_env(vars);
    pid_t pid = 0;
    int e = env ? spawn(c, env, &pid) : ENOMEM;
    free(env);
    if (e) {
        say(c, "on-event %s (%s): could not start it: %s", c->program, what, strerror(e));
        return CC_EVENT_RUN_FAILED;
    }
    pthread_mutex_lock(&c->lock);
    c->child = pid;
    memcpy(c->what, what, sizeof(what));
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->lock);
    return CC_EVENT_RUN_STARTED;
}
