/* camclass — the reference backend ("ref"): runs a finalized model with the plain C ops of
 * ref_ops.c. It is what the tests compare every other backend's ops with, and
 * `--backend ref` runs it for debugging; the fast CPU path is xnn_backend.c.
 *
 * Activations live in one arena laid out by cc_plan; f32 constants are read in place from the
 * model. i8 weights (conv2d/linear) are dequantized once, here at create, into f32 copies
 * (float(q) * scale, as cc_tensor_dequantize does): the ops then run the f32 code unchanged,
 * the simplest and fastest choice for a CPU, which has the memory for it. Nodes run in order; a
 * node whose op can split its work (convolutions mostly) is shared between the calling thread and
 * the pool's workers, part p of n each.
 *
 * Threads: the calling thread (the engine's user) drives the run; the workers only ever run
 * parts of the current node, handed over under pool.lock, and sleep otherwise.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "blis_conv.h"
#include "cpu_info.h"
#include "ref_ops.h"
#include "plan.h"
#include "poison.h"
#include "clock.h"

enum {
    ARENA_ALIGN = 64,      // bytes; one cache line, and what SIMD loads like
    SPLIT_MIN_COUNT = 4096 // outputs below this run on one thread: a hand-over costs more
};

/* ------------------------------------------------------------------------------------------
 * Worker pool
 */

// One node's work, as handed to the workers.
struct job {
    const struct cc_model *model;
    const struct cc_node *node;
    const struct cc_ref_op *op;
    const float *const *in;
    float *out;
    int n_parts;
    float *scratch;        // part p uses scratch + p * scratch_stride
    size_t scratch_stride; // floats
};

struct pool {
    pthread_t threads[CC_CPU_MAX_THREADS]; // (n_workers)
    int n_workers;
    pthread_mutex_t lock; // guards everything below
    pthread_cond_t wake;  // workers wait here for a new generation or quit
    pthread_cond_t done;  // the caller waits here for pending == 0
    struct job job;
    unsigned generation; // bumped for every job
    int pending;         // workers still busy with the current job
    bool quit;
};

// A worker's own view: the pool and its part number (1..n_workers; the caller is part 0).
struct worker_arg {
    struct pool *pool;
    int part;
};

struct ref_state {
    const struct cc_model *model; // not owned
    struct cc_plan plan;
    void *arena;           // plan.arena_size bytes, ARENA_ALIGN-aligned, owned
    float **data;          // (n_tensors) values of each tensor: model data, dequant or arena
    float *dequant;        // every i8 weight dequantized to f32, one after the other; owned
    const float **ins;     // (n_nodes * CC_MAX_NODE_INPUTS) input pointers per node
    float *scratch;        // (threads * scratch_stride) ops' scratch, one share per thread
    size_t scratch_stride; // floats: the most any node needs
    struct cc_layer_timing *timings; // (n_nodes), of the last run
    int n_timings;
    char device_name[160];
    struct pool pool;
    bool pool_started;
    bool poison; // poison the arena and the scratch before every run (poison.h)
    int tap;     // the tapped tensor (kept by the plan), -1 for none
    struct worker_arg args[CC_CPU_MAX_THREADS];
};

static void run_part(const struct job *job, int part)
{
    job->op->run(job->model, job->node, job->in, job->out,
                 (struct cc_ref_part){part, job->n_parts,
                                      job->scratch + (size_t)part * job->scratch_stride});
}

static void *worker_main(void *p)
{
    struct worker_arg *arg = p;
    struct pool *pool = arg->pool;
    unsigned seen = 0;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (!pool->quit && pool->generation == seen)
            pthread_cond_wait(&pool->wake, &pool->lock);
        if (pool->quit)
            break;
        seen = pool->generation;
        struct job job = pool->job;
        pthread_mutex_unlock(&pool->lock);

        if (arg->part < job.n_parts)
            run_part(&job, arg->part);

        pthread_mutex_lock(&pool->lock);
        if (--pool->pending == 0)
            pthread_cond_signal(&pool->done);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

/* Runs job on the calling thread (part 0) and every worker; returns when all are done. */
static void pool_run(struct pool *pool, const struct job *job)
{
    pthread_mutex_lock(&pool->lock);
    pool->job = *job;
    pool->generation++;
    pool->pending = pool->n_workers;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);

    run_part(job, 0);

    pthread_mutex_lock(&pool->lock);
    while (pool->pending > 0)
        pthread_cond_wait(&pool->done, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
}

static bool pool_start(struct ref_state *s, int n_workers, struct cc_error *err)
{
    struct pool *pool = &s->pool;
    memset(pool, 0, sizeof(*pool));
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
    s->pool_started = true;
    for (int i = 0; i < n_workers; i++) {
        s->args[i] = (struct worker_arg){pool, i + 1};
        int rc = pthread_create(&pool->threads[i], NULL, worker_main, &s->args[i]);
        if (rc != 0)
            return cc_error_set(err,
                                "ref backend: pthread_create failed (%s); "
                                "try fewer threads",
                                strerror(rc));
        pool->n_workers++;
    }
    return true;
}

static void pool_stop(struct pool *pool)
{
    pthread_mutex_lock(&pool->lock);
    pool->quit = true;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < pool->n_workers; i++)
        pthread_join(pool->threads[i], NULL);
    pthread_cond_destroy(&pool->done);
    pthread_cond_destroy(&pool->wake);
    pthread_mutex_destroy(&pool->lock);
}

/* ------------------------------------------------------------------------------------------
 * Backend
 */

static void ref_destroy(void *p)
{
    struct ref_state *s = p;
    if (!s)
        return;
    if (s->pool_started)
        pool_stop(&s->pool);
    free(s->timings);
    free(s->scratch);
    free(s->ins);
    free(s->data);
    free(s->dequant);
    free(s->arena);
    cc_plan_finish(&s->plan);
    free(s);
}

static void *ref_create(const struct cc_model *m, const struct cc_engine_options *opts,
                        struct cc_error *err)
{
    for (int n = 0; n < m->n_nodes; n++)
        if (!cc_ref_op_find(m->nodes[n].op)) {
            cc_error_set(err, "ref backend: op %s (node %s) is not implemented",
                         cc_op_name(m->nodes[n].op), m->nodes[n].name);
            return NULL;
        }
    if (!cc_blis_conv_setup(err)) // its conv2d and linear ops run BLIS's GEMM
        return NULL;

    struct ref_state *s = calloc(1, sizeof(*s));
    if (!s) {
        cc_error_set(err, "ref backend: out of memory");
        return NULL;
    }
    s->model = m;
    s->poison = opts && opts->poison;
    s->tap = cc_backend_tap(m, opts);
    if (!cc_plan_init_keep(&s->plan, m, ARENA_ALIGN, s->tap, err))
        goto error;

    size_t n_tensors = (size_t)(m->n_tensors > 0 ? m->n_tensors : 1);
    size_t n_nodes = (size_t)(m->n_nodes > 0 ? m->n_nodes : 1);
    size_t arena = s->plan.arena_size ? s->plan.arena_size : ARENA_ALIGN;
    if (posix_memalign(&s->arena, ARENA_ALIGN, arena) != 0)
        s->arena = NULL;
    s->data = calloc(n_tensors, sizeof(*s->data));
    s->ins = calloc(n_nodes * CC_MAX_NODE_INPUTS, sizeof(*s->ins));
    s->timings = calloc(n_nodes, sizeof(*s->timings));
    if (!s->arena || !s->data || !s->ins || !s->timings) {
        cc_error_set(err, "ref backend: out of memory for a %zu-byte activation arena", arena);
        goto error;
    }
    memset(s->arena, 0, arena);
    size_t n_dequant = 0; // floats
    for (int t = 0; t < m->n_tensors; t++)
        if (m->tensors[t].q)
            n_dequant += (size_t)m->tensors[t].count;
    if (n_dequant && !(s->dequant = malloc(n_dequant * sizeof(float)))) {
        cc_error_set(err, "ref backend: out of memory for %zu dequantized int8 weights", n_dequant);
        goto error;
    }
    n_dequant = 0;
    for (int t = 0; t < m->n_tensors; t++) {
        const struct cc_tensor *ten = &m->tensors[t];
        if (ten->q) {
            s->data[t] = s->dequant + n_dequant;
            cc_tensor_dequantize(ten, s->data[t]);
            n_dequant += (size_t)ten->count;
        } else {
            s->data[t] = ten->data ? ten->data : (float *)((char *)s->arena + s->plan.offset[t]);
        }
    }
    for (int n = 0; n < m->n_nodes; n++)
        for (int i = 0; i < m->nodes[n].n_inputs; i++)
            s->ins[(size_t)n * CC_MAX_NODE_INPUTS + i] = s->data[m->nodes[n].inputs[i]];

    int threads = cc_cpu_threads(opts ? opts->cpu_threads : 0);
    for (int n = 0; n < m->n_nodes; n++) {
        const struct cc_ref_op *op = cc_ref_op_find(m->nodes[n].op);
        size_t need = op->scratch ? op->scratch(m, &m->nodes[n]) : 0;
        s->scratch_stride = need > s->scratch_stride ? need : s->scratch_stride;
    }
    if (s->scratch_stride) {
        s->scratch = malloc((size_t)threads * s->scratch_stride * sizeof(float));
        if (!s->scratch) {
            cc_error_set(err, "ref backend: out of memory for %d x %zu floats of scratch", threads,
                         s->scratch_stride);
            goto error;
        }
    }
    cc_cpu_describe(s->device_name, sizeof(s->device_name), threads, ", reference C ops");
    if (!pool_start(s, threads - 1, err))
        goto error;
    return s;

error:
    ref_destroy(s);
    return NULL;
}

static bool ref_run(void *p, const float *input, float *output, struct cc_error *err)
{
    struct ref_state *s = p;
    const struct cc_model *m = s->model;
    const struct cc_tensor *in_t = &m->tensors[m->input.tensor];
    const struct cc_tensor *out_t = &m->tensors[m->output.tensor];
    if (s->poison) {
        cc_poison_f32(s->arena, s->plan.arena_size);
        if (s->scratch)
            cc_poison_f32(s->scratch, (size_t)(s->pool.n_workers + 1) * s->scratch_stride *
                                          sizeof(float));
    }
    memcpy(s->data[m->input.tensor], input, (size_t)in_t->count * sizeof(float));

    int n_parts = s->pool.n_workers + 1;
    s->n_timings = 0;
    for (int n = 0; n < m->n_nodes; n++) {
        const struct cc_node *node = &m->nodes[n];
        const struct cc_ref_op *op = cc_ref_op_find(node->op);
        struct job job = {
            .model = m,
            .node = node,
            .op = op,
            .in = &s->ins[(size_t)n * CC_MAX_NODE_INPUTS],
            .out = s->data[node->outputs[0]],
            .n_parts = 1,
            .scratch = s->scratch,
            .scratch_stride = s->scratch_stride,
        };
        double t0 = cc_now_ms();
        if (n_parts > 1 && op->splits && m->tensors[node->outputs[0]].count >= SPLIT_MIN_COUNT) {
            job.n_parts = n_parts;
            pool_run(&s->pool, &job);
        } else {
            run_part(&job, 0);
        }
        s->timings[s->n_timings++] = (struct cc_layer_timing){n, cc_now_ms() - t0};
    }

    memcpy(output, s->data[m->output.tensor], (size_t)out_t->count * sizeof(float));
    (void)err; // nothing in a CPU run can fail once create succeeded
    return true;
}

static int ref_layer_timings(void *p, const struct cc_layer_timing **out)
{
    struct ref_state *s = p;
    *out = s->timings;
    return s->n_timings;
}

static void ref_tap_read(void *p, float *out)
{
    struct ref_state *s = p;
    memcpy(out, s->data[s->tap], (size_t)s->model->tensors[s->tap].count * sizeof(float));
}

static const char *ref_device_name(void *p)
{
    return ((struct ref_state *)p)->device_name;
}

const struct cc_backend_ops cc_ref_backend = {
    .name = "ref",
    .create = ref_create,
    .run = ref_run,
    .layer_timings = ref_layer_timings,
    .device_name = ref_device_name,
    .tap_read = ref_tap_read,
    .destroy = ref_destroy,
};
