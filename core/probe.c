/*
 * core/probe.c — the loader's probe child (see probe.h).
 *
 * Why a pipe and not just the exit status: a plugin may exit(0) from a
 * constructor or its query, or install a SIGSEGV handler that exits (as
 * vendor runtimes do), and all of these look like a clean exit to
 * waitpid.  Only a child that walked through every stage and wrote "done"
 * passed.  The child resets every signal disposition it inherited (the
 * host may already hold a vendor runtime's handlers from an accepted
 * plugin), sends its stdio to /dev/null (so nothing is printed twice) and
 * runs in its own process group, so a timeout kills whatever it started.
 */
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "loader.h"

static int child_fd = -1;   /* the pipe's write end, in the child only */
static int probe_timeout_ms = 10000;

int tilec_probe_set_timeout(int ms)
{
    int old = probe_timeout_ms;
    probe_timeout_ms = ms > 0 ? ms : 1;
    return old;
}

int tilec_probe_in_child(void)
{
    return child_fd >= 0;
}

static void child_send(const char *msg, size_t len)
{
    while (len) {
        ssize_t w = write(child_fd, msg, len);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            return;
        }
        msg += w;
        len -= (size_t)w;
    }
}

void tilec_probe_stage(const char *fmt, ...)
{
    char line[200];
    va_list ap;
    int n;
    if (child_fd < 0) {
        return;
    }
    line[0] = 'S';
    line[1] = ' ';
    va_start(ap, fmt);
    n = vsnprintf(line + 2, sizeof line - 3, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    n = (int)strlen(line);
    line[n++] = '\n';
    child_send(line, (size_t)n);
}

static void child_setup(int wfd)
{
    sigset_t all;
    int null;
    child_fd = wfd;
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig != SIGKILL && sig != SIGSTOP) {
            signal(sig, SIG_DFL);
        }
    }
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    setpgid(0, 0);
    null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        if (null > 2) {
            close(null);
        }
    }
}

static long ms_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - t0->tv_sec) * 1000L + (now.tv_nsec - t0->tv_nsec) / 1000000L;
}

/* Reads what is there; returns 0 at EOF, 1 when more may come. */
static int drain(int fd, char *stage, size_t stagecap, int *done, char *buf, size_t *blen,
                 size_t bcap)
{
    for (;;) {
        ssize_t r = read(fd, buf + *blen, bcap - *blen);
        if (r < 0) {
            return errno == EINTR ? 1 : (errno == EAGAIN || errno == EWOULDBLOCK) ? 1 : 0;
        }
        if (r == 0) {
            return 0;
        }
        *blen += (size_t)r;
        /* Take every complete line. */
        for (;;) {
            char *nl = memchr(buf, '\n', *blen);
            size_t ll;
            if (!nl) {
                if (*blen == bcap) {
                    *blen = 0; /* a line longer than any we send: drop it */
                }
                break;
            }
            ll = (size_t)(nl - buf);
            if (ll >= 2 && buf[0] == 'S' && buf[1] == ' ') {
                size_t n = ll - 2 < stagecap - 1 ? ll - 2 : stagecap - 1;
                memcpy(stage, buf + 2, n);
                stage[n] = '\0';
            } else if (ll == 1 && buf[0] == 'D') {
                *done = 1;
            }
            memmove(buf, nl + 1, *blen - ll - 1);
            *blen -= ll + 1;
        }
    }
}

int tilec_probe_run(void (*work)(void *), void *arg, char **reason)
{
    int fds[2], status = 0, done = 0, have_status = 0, open_end = 1;
    char stage[200] = "loading";
    char buf[512];
    size_t blen = 0;
    struct timespec t0;
    pid_t pid;
    *reason = NULL;
    if (pipe2(fds, O_CLOEXEC) != 0) {
        *reason = tilec_strfmt("pipe failed: %s", strerror(errno));
        return -1;
    }
    /* The child may flush stdio on exit: give it nothing to repeat. */
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        *reason = tilec_strfmt("fork failed: %s", strerror(e));
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        child_setup(fds[1]);
        work(arg);
        child_send("D\n", 2);
        _exit(0);
    }
    close(fds[1]);
    setpgid(pid, pid); /* also done by the child; whichever runs first */
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!done && !have_status) {
        long left = probe_timeout_ms - ms_since(&t0);
        struct pollfd p = {fds[0], POLLIN, 0};
        if (left <= 0) {
            break;
        }
        if (open_end) {
            int pr = poll(&p, 1, left < 50 ? (int)left : 50);
            if (pr > 0) {
                open_end = drain(fds[0], stage, sizeof stage, &done, buf, &blen, sizeof buf);
            }
        } else {
            struct timespec ts = {0, 5 * 1000000L};
            nanosleep(&ts, NULL);
        }
        if (!done) {
            /* The child may be gone while something it started keeps the
             * pipe open. */
            pid_t r = waitpid(pid, &status, WNOHANG);
            if (r == pid) {
                have_status = 1;
                if (open_end) {
                    open_end = drain(fds[0], stage, sizeof stage, &done, buf, &blen, sizeof buf);
                }
            } else if (r < 0 && errno == ECHILD && !open_end) {
                break; /* SIGCHLD ignored: no status, and the pipe is closed */
            }
        }
    }
    close(fds[0]);
    if (!done && !have_status && ms_since(&t0) >= probe_timeout_ms) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        *reason = tilec_strfmt("hung while being queried: %s did not return within %d ms", stage,
                               probe_timeout_ms);
        return 1;
    }
    if (!have_status) {
        while (waitpid(pid, &status, 0) < 0) {
            if (errno != EINTR) {
                break;
            }
        }
    }
    if (done) {
        return 0;
    }
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        *reason = tilec_strfmt("crashed while being queried: signal %d (%s) in %s", sig,
                               strsignal(sig), stage);
    } else if (WIFEXITED(status)) {
        *reason = tilec_strfmt("exited while being queried: status %d in %s (a plugin must "
                               "return, never exit the process)",
                               WEXITSTATUS(status), stage);
    } else {
        *reason = tilec_strfmt("stopped while being queried, in %s", stage);
    }
    return 1;
}

/* ---- results by file identity ------------------------------------------- */

typedef struct known {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    char *reason;
} known_t;

static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;
static known_t *known;
static int nknown, capknown;

static int same_file(const known_t *k, const struct stat *st)
{
    return k->dev == st->st_dev && k->ino == st->st_ino && k->size == st->st_size &&
           k->mtime.tv_sec == st->st_mtim.tv_sec && k->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

int tilec_probe_cached(const struct stat *st, char **reason)
{
    int found = 0;
    *reason = NULL;
    pthread_mutex_lock(&known_lock);
    for (int i = 0; i < nknown; i++) {
        if (same_file(&known[i], st)) {
            *reason = strdup(known[i].reason);
            found = *reason != NULL;
            break;
        }
    }
    pthread_mutex_unlock(&known_lock);
    return found;
}

void tilec_probe_remember(const struct stat *st, const char *reason)
{
    char *r = strdup(reason ? reason : "");
    if (!r) {
        return;
    }
    pthread_mutex_lock(&known_lock);
    for (int i = 0; i < nknown; i++) {
        if (known[i].dev == st->st_dev && known[i].ino == st->st_ino) {
            free(known[i].reason);
            known[i] = (known_t){st->st_dev, st->st_ino, st->st_size, st->st_mtim, r};
            r = NULL;
            break;
        }
    }
    if (r && nknown == capknown) {
        int cap = capknown ? capknown * 2 : 16;
        known_t *k = realloc(known, (size_t)cap * sizeof *k);
        if (k) {
            known = k;
            capknown = cap;
        }
    }
    if (r && nknown < capknown) {
        known[nknown++] = (known_t){st->st_dev, st->st_ino, st->st_size, st->st_mtim, r};
        r = NULL;
    }
    pthread_mutex_unlock(&known_lock);
    free(r);
}

__attribute__((destructor)) static void known_free(void)
{
    for (int i = 0; i < nknown; i++) {
        free(known[i].reason);
    }
    free(known);
    known = NULL;
    nknown = capknown = 0;
}
