/* robodyn's thread driver, shared by the generic kernels and every rd.compile library.
 *
 * rd_parallel(fn, args, count, threads, granule) runs fn(args, lo, hi) over [0, count) in chunks of consecutive
 * items, multiples of `granule`: the caller and threads-1 detached POSIX threads claim chunks from an atomic
 * counter until none is left, and the caller returns once every item is done.  Each claim takes 1/(2 threads) of
 * what is left, and at least 1/(64 threads) of the whole (guided scheduling): the chunks shrink towards the end,
 * so that the threads finish within a small chunk of each other, where fixed chunks of 1/(8 threads) left one
 * thread idle for half a chunk on average (1/32 of a 2-thread call; benchmarks/README.md, bench_threads.py).  Helpers
 * share a reference-counted record with the caller, so a helper the system starts late (every chunk taken)
 * touches only that record: the call never waits for a thread that has no work, and no thread spins or outlives
 * its work.  fn computes each item by the same instructions whatever its chunk, so results are identical bit
 * for bit for any thread count.  Without RD_THREADS (no <pthread.h>) everything runs on the caller.
 *
 * fn returns 0 or a code; rd_parallel returns the smallest nonzero code in unsigned order (positive codes first,
 * then negative ones, -3 before -2 before -1), or -1 when the record cannot be allocated. */
typedef long (*rd_chunk_fn)(void *args, long lo, long hi);

static long rd_first_code(long a, long b) {
    return !a || (b && (unsigned long)b < (unsigned long)a) ? b : a;
}

typedef struct {
    rd_chunk_fn fn;
    void *args;
    long count, next, chunk, done, code;
    int refs, threads;
#ifdef RD_THREADS
    pthread_mutex_t lock;
    pthread_cond_t finished;
#endif
} rd_shared;

static void rd_take(rd_shared *sh) {
    long code = 0, done = 0;
    long lo = __atomic_load_n(&sh->next, __ATOMIC_RELAXED);
    while (lo < sh->count) {
        long left = sh->count - lo, size = (left + 2 * sh->threads - 1) / (2 * sh->threads);
        size = size < sh->chunk ? sh->chunk : (size + sh->chunk - 1) / sh->chunk * sh->chunk;
        long hi = size < left ? lo + size : sh->count;
        if (!__atomic_compare_exchange_n(&sh->next, &lo, hi, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) continue;
        code = rd_first_code(code, sh->fn(sh->args, lo, hi));
        done += hi - lo;
        lo = __atomic_load_n(&sh->next, __ATOMIC_RELAXED);
    }
#ifdef RD_THREADS
    pthread_mutex_lock(&sh->lock);
#endif
    sh->done += done;
    sh->code = rd_first_code(sh->code, code);
#ifdef RD_THREADS
    if (sh->done == sh->count) pthread_cond_broadcast(&sh->finished);
    pthread_mutex_unlock(&sh->lock);
#endif
}

#ifdef RD_THREADS
static void rd_release(rd_shared *sh) {
    pthread_mutex_lock(&sh->lock);
    int last = --sh->refs == 0;
    pthread_mutex_unlock(&sh->lock);
    if (last) { pthread_mutex_destroy(&sh->lock); pthread_cond_destroy(&sh->finished); free(sh); }
}
static void *rd_helper(void *arg) { rd_take((rd_shared *)arg); rd_release((rd_shared *)arg); return NULL; }
#endif

static long rd_parallel(rd_chunk_fn fn, void *args, long count, int threads, long granule) {
    if (count <= 0) return 0;
    if (threads <= 1) return fn(args, 0, count);   /* one thread: no record, no lock */
    rd_shared *sh = (rd_shared *)calloc(1, sizeof(rd_shared));
    if (!sh) return -1;
    sh->fn = fn; sh->args = args; sh->count = count; sh->refs = 1; sh->threads = threads;
    sh->chunk = ((count + 64 * threads - 1) / (64 * threads) + granule - 1) / granule * granule;
#ifdef RD_THREADS
    pthread_mutex_init(&sh->lock, NULL);
    pthread_cond_init(&sh->finished, NULL);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (int t = 1; t < threads; t++) {
        pthread_t tid;
        pthread_mutex_lock(&sh->lock);
        sh->refs++;
        pthread_mutex_unlock(&sh->lock);
        if (pthread_create(&tid, &attr, rd_helper, sh) != 0) { rd_release(sh); break; }   /* the caller does it */
    }
    pthread_attr_destroy(&attr);
    rd_take(sh);
    pthread_mutex_lock(&sh->lock);
    while (sh->done < sh->count) pthread_cond_wait(&sh->finished, &sh->lock);
    pthread_mutex_unlock(&sh->lock);
    long code = sh->code;
    rd_release(sh);
#else
    rd_take(sh);
    long code = sh->code;
    free(sh);
#endif
    return code;
}
