/* Worker threads that outlive a call: started on first use, kept waiting between calls.
 *
 * One long text cut into parts, or a batch of texts, is encoded by a few threads at once;
 * these are made once and woken for each call, where a Python ThreadPoolExecutor needed a
 * Future, a work item and the GIL on each worker before and after its part, and the
 * allocations that started the cyclic collector. Nothing here touches Python. A forked
 * child has none of its parent's threads: it starts its own on its first call. */
#ifndef FBPE_WORKERS_H
#define FBPE_WORKERS_H

#include <stddef.h>

typedef void (*fbpe_work_fn)(void *arg);

/* Whether fbpe_workers_run runs on more than one thread on this platform (POSIX threads). */
int fbpe_workers_available(void);

/* Call fn(arg) on up to `threads` threads, the calling thread one of them, and return when
 * every call has returned. fn must share its work out itself (an atomic counter) and be
 * correct for any number of calls from 1 to `threads`: a worker not yet started when the
 * calling thread's own call returns is not woken for it; while another call has the
 * workers, or where no thread can be started, the calling thread does it all. */
void fbpe_workers_run(size_t threads, fbpe_work_fn fn, void *arg);

#endif
