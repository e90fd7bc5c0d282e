/* Persistent worker threads; see workers.h. */
#include "workers.h"

#include "bounds.h"

#if defined(_WIN32)

int fbpe_workers_available(void) { return 0; }

void fbpe_workers_run(size_t threads, fbpe_work_fn fn, void *arg) {
    (void)threads;
    fn(arg);
}

#else

#include <pthread.h>
#include <signal.h>

/* Everything below is guarded by mu. A call posts its job as `open` calls of fn for the
 * workers to take; each worker that takes one counts itself in `running` until fn returns. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER; /* a job was posted */
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER; /* running fell to 0 */
static size_t started;                                 /* worker threads alive */
static int busy;                                       /* a call holds the workers */
static fbpe_work_fn job_fn;
static void *job_arg;
static size_t open_calls, running;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void *worker_main(void *unused) {
    (void)unused;
    pthread_mutex_lock(&mu);
    for (;;) {
        while (!open_calls) pthread_cond_wait(&wake, &mu);
        open_calls--;
        running++;
        fbpe_work_fn fn = job_fn;
        void *arg = job_arg;
        pthread_mutex_unlock(&mu);
        fn(arg);
        pthread_mutex_lock(&mu);
        if (--running == 0) pthread_cond_signal(&idle);
    }
    return NULL;
}

/* fork() copies only the thread that calls it: the lock is held across it, so that the child
 * finds the state whole, and the child forgets the workers, which do not exist there. */
static void before_fork(void) { pthread_mutex_lock(&mu); }
static void after_fork_parent(void) { pthread_mutex_unlock(&mu); }
static void after_fork_child(void) {
    started = 0;
    busy = 0;
    open_calls = running = 0;
    pthread_cond_init(&wake, NULL);
    pthread_cond_init(&idle, NULL);
    pthread_mutex_unlock(&mu);
}
static void register_fork(void) { pthread_atfork(before_fork, after_fork_parent, after_fork_child); }

/* Start workers until `want` are alive (or one fails to start). With every signal blocked:
 * the interpreter's handlers must run on its own threads. Called with mu held. */
static void start_workers(size_t want) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    while (started < want) {
        pthread_t t;
        if (pthread_create(&t, &attr, worker_main, NULL)) break;
        started++;
    }
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int fbpe_workers_available(void) { return 1; }

void fbpe_workers_run(size_t threads, fbpe_work_fn fn, void *arg) {
    if (threads <= 1) {
        fn(arg);
        return;
    }
    pthread_once(&fork_once, register_fork);
    size_t helpers = threads - 1;
    if (helpers > (size_t)FBPE_MAX_THREADS) helpers = FBPE_MAX_THREADS;
    pthread_mutex_lock(&mu);
    if (busy) { /* another thread's call has the workers: this one runs alone */
        pthread_mutex_unlock(&mu);
        fn(arg);
        return;
    }
    busy = 1;
    start_workers(helpers);
    if (helpers > started) helpers = started;
    job_fn = fn;
    job_arg = arg;
    open_calls = helpers;
    if (helpers == started)
        pthread_cond_broadcast(&wake);
    else
        for (size_t k = 0; k < helpers; k++) pthread_cond_signal(&wake);
    pthread_mutex_unlock(&mu);
    fn(arg);
    pthread_mutex_lock(&mu);
    /* The calling thread's fn returned, so every unit was taken: a worker that has not woken
     * yet would find nothing, and is not waited for. */
    open_calls = 0;
    while (running) pthread_cond_wait(&idle, &mu);
    busy = 0;
    pthread_mutex_unlock(&mu);
}

#endif
