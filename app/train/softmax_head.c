/* camclass-train — a new classifier head on feature vectors (see softmax_head.h). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lbfgs.h>

#include "softmax_head.h"

enum { PATIENCE = 10, MAX_ITERATIONS = 500 };

/* The problem as lbfgs() sees it: parameters x = [W (k x dim), b (k)] on standardised rows. */
struct problem {
    const struct cc_rows *train, *held;
    const double *xt, *xh;   // the training and held-out rows standardised (n x dim each)
    int dim, k;
    double l2;
    const double *mu, *sd;   // (dim) standardisation
    const double *weight;    // (k) class weights, mean 1 over the training rows
    double *z;               // (k) scratch: one row's scores
    double *best;            // (k * dim + k) parameters at the best held-out loss
    double best_loss;
    int best_iteration, since_best, iterations;
    bool stopped; // progress() ended it: the held-out loss stopped improving
};

/* Softmax of standardised row f's scores into p->z; returns -log p(label). */
static double row_loss(struct problem *p, const double *f, int label, const double *x)
{
    const double *b = x + (size_t)p->k * p->dim;
    double top = -DBL_MAX, sum = 0;
    for (int c = 0; c < p->k; c++) {
        const double *wc = x + (size_t)c * p->dim;
        double s = b[c];
        for (int j = 0; j < p->dim; j++)
            s += wc[j] * f[j];
        p->z[c] = s;
        top = fmax(top, s);
    }
    for (int c = 0; c < p->k; c++)
        sum += (p->z[c] = exp(p->z[c] - top));
    for (int c = 0; c < p->k; c++)
        p->z[c] /= sum;
    return -log(fmax(p->z[label], 1e-300));
}

/* Mean cross-entropy of rows r (unweighted): what early stopping and the report use. */
static double mean_loss(struct problem *p, const struct cc_rows *r, const double *xs,
                        const double *x)
{
    double s = 0;
    for (int i = 0; i < r->n; i++)
        s += row_loss(p, xs + (size_t)i * p->dim, r->y[i], x);
    return r->n ? s / r->n : 0;
}

static lbfgsfloatval_t evaluate(void *inst, const lbfgsfloatval_t *x, lbfgsfloatval_t *g,
                                const int n, const lbfgsfloatval_t step)
{
    (void)step;
    struct problem *p = inst;
    const struct cc_rows *r = p->train;
    size_t nw = (size_t)p->k * p->dim;
    memset(g, 0, (size_t)n * sizeof(*g));
    double loss = 0;
    for (int i = 0; i < r->n; i++) {
        const double *f = p->xt + (size_t)i * p->dim;
        double wi = p->weight[r->y[i]] / r->n;
        loss += wi * row_loss(p, f, r->y[i], x);
        for (int c = 0; c < p->k; c++) {
            double d = wi * (p->z[c] - (c == r->y[i]));
            for (int j = 0; j < p->dim; j++)
                g[(size_t)c * p->dim + j] += d * f[j];
            g[nw + c] += d;
        }
    }
    for (size_t j = 0; j < nw; j++) {
        loss += 0.5 * p->l2 * x[j] * x[j];
        g[j] += p->l2 * x[j];
    }
    return loss;
}

static int progress(void *inst, const lbfgsfloatval_t *x, const lbfgsfloatval_t *g,
                    const lbfgsfloatval_t fx, const lbfgsfloatval_t xnorm,
                    const lbfgsfloatval_t gnorm, const lbfgsfloatval_t step, int n, int k,
                    int ls)
{
    (void)g, (void)fx, (void)xnorm, (void)gnorm, (void)step, (void)ls;
    struct problem *p = inst;
    p->iterations = k;
    double held = p->held->n ? mean_loss(p, p->held, p->xh, x) : -(double)k; // no held-out: the last
    if (held < p->best_loss) {
        p->best_loss = held, p->best_iteration = k, p->since_best = 0;
        memcpy(p->best, x, (size_t)n * sizeof(*x));
    }
    p->stopped = ++p->since_best > PATIENCE && p->held->n;
    return p->stopped; // nonzero stops lbfgs()
}

/* Mean and deviation of each feature over the training rows (a constant feature gets 1). */
static void standardise(const struct cc_rows *r, int dim, double *mu, double *sd)
{
    for (int j = 0; j < dim; j++) {
        double s = 0, s2 = 0;
        for (int i = 0; i < r->n; i++) {
            double v = r->x[(size_t)i * dim + j];
            s += v, s2 += v * v;
        }
        mu[j] = s / r->n;
        double var = s2 / r->n - mu[j] * mu[j];
        sd[j] = var > 1e-12 ? sqrt(var) : 1.0;
    }
}

/* r's rows standardised by mu, sd into a new array (NULL: out of memory). */
static double *standardised(const struct cc_rows *r, int dim, const double *mu, const double *sd)
{
    double *xs = malloc(((size_t)r->n * dim + 1) * sizeof(double));
    for (size_t i = 0; xs && i < (size_t)r->n; i++)
        for (int j = 0; j < dim; j++)
            xs[i * dim + j] = ((double)r->x[i * dim + j] - mu[j]) / sd[j];
    return xs;
}

/* Class weights n / (k * n_c), so that every class weighs the same in the loss. */
static void class_weights(const struct cc_rows *r, int k, double *weight)
{
    for (int c = 0; c < k; c++)
        weight[c] = 0;
    for (int i = 0; i < r->n; i++)
        weight[r->y[i]] += 1;
    for (int c = 0; c < k; c++)
        weight[c] = weight[c] > 0 ? (double)r->n / (k * weight[c]) : 0;
}

/* w, b from standardised parameters x: w = W / sd, b = b - W mu / sd. */
static void fold(const double *x, const double *mu, const double *sd, int dim, int k, float *w,
                 float *b)
{
    for (int c = 0; c < k; c++) {
        double bias = x[(size_t)k * dim + c];
        for (int j = 0; j < dim; j++) {
            double wj = x[(size_t)c * dim + j] / sd[j];
            w[(size_t)c * dim + j] = (float)wj;
            bias -= wj * mu[j];
        }
        b[c] = (float)bias;
    }
}

bool cc_softmax_head_train(const struct cc_rows *train, const struct cc_rows *held, int dim,
                           int k, double l2, float *w, float *b, struct cc_head_fit *fit,
                           struct cc_error *err)
{
    int n = k * dim + k;
    lbfgsfloatval_t *x = lbfgs_malloc(n);
    double *mu = malloc((size_t)dim * sizeof(double)), *sd = malloc((size_t)dim * sizeof(double));
    double *weight = malloc((size_t)k * sizeof(double)), *z = malloc((size_t)k * sizeof(double));
    double *best = calloc((size_t)n, sizeof(double)), *xt = NULL, *xh = NULL;
    bool ok = x && mu && sd && weight && z && best && train->n > 0;
    if (ok) {
        standardise(train, dim, mu, sd);
        xt = standardised(train, dim, mu, sd);
        xh = standardised(held, dim, mu, sd);
        ok = xt && xh;
    }
    if (!ok) {
        cc_error_set(err, train->n ? "out of memory for a %d x %d head" : "no training images",
                     k, dim);
        goto done;
    }
    memset(x, 0, (size_t)n * sizeof(*x));
    class_weights(train, k, weight);
    struct problem p = {.train = train, .held = held, .xt = xt, .xh = xh, .dim = dim, .k = k,
                        .l2 = l2, .mu = mu, .sd = sd, .weight = weight, .z = z, .best = best,
                        .best_loss = DBL_MAX};
    lbfgs_parameter_t param;
    lbfgs_parameter_init(&param);
    param.max_iterations = MAX_ITERATIONS;
    param.epsilon = 1e-6;
    lbfgsfloatval_t fx;
    int rc = lbfgs(n, x, &fx, evaluate, progress, &p, &param);
    if (p.iterations == 0 && rc == LBFGS_ALREADY_MINIMIZED)
        memcpy(best, x, (size_t)n * sizeof(*x)); // zero weights: the features say nothing
    else if (p.iterations == 0) {
        ok = cc_error_set(err, "training the head failed at the start: liblbfgs status %d "
                               "(the features may hold NaN or infinity)", rc);
        goto done;
    }
    fold(best, mu, sd, dim, k, w, b);
    *fit = (struct cc_head_fit){
        .iterations = p.iterations,
        .best_iteration = p.best_iteration,
        .train_loss = mean_loss(&p, train, xt, best),
        .held_loss = held->n ? mean_loss(&p, held, xh, best) : NAN,
        .stop = p.stopped ? "early stopping: the held-out loss stopped improving"
                : rc == LBFGS_SUCCESS || rc == LBFGS_ALREADY_MINIMIZED
                    ? "converged"
                : rc == LBFGSERR_MAXIMUMITERATION ? "iteration limit"
                                                  : "line search ended",
    };

done:
    lbfgs_free(x);
    free(mu), free(sd), free(weight), free(z), free(best), free(xt), free(xh);
    return ok;
}

void cc_softmax_head_predict(const struct cc_rows *r, int dim, int k, const float *w,
                             const float *b, int *out, float *prob)
{
    for (int i = 0; i < r->n; i++) {
        int arg = 0;
        double top = -DBL_MAX, sum = 0;
        for (int c = 0; c < k; c++) {
            double z = b[c];
            for (int j = 0; j < dim; j++)
                z += (double)w[(size_t)c * dim + j] * r->x[(size_t)i * dim + j];
            if (z > top)
                top = z, arg = c;
        }
        for (int c = 0; prob && c < k; c++) {
            double z = b[c];
            for (int j = 0; j < dim; j++)
                z += (double)w[(size_t)c * dim + j] * r->x[(size_t)i * dim + j];
            sum += exp(z - top);
        }
        out[i] = arg;
        if (prob)
            prob[i] = (float)(1.0 / sum);
    }
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

float cc_softmax_head_unknown_threshold(const int *truth, const int *pred, const float *prob,
                                        int n, int k)
{
    float *right = malloc(((size_t)n + 1) * sizeof(float));
    int m = 0;
    for (int i = 0; right && i < n; i++)
        if (truth[i] == pred[i])
            right[m++] = prob[i];
    float t = 0;
    if (right && m >= 10) {
        qsort(right, (size_t)m, sizeof(float), cmp_float);
        t = right[(int)(0.05 * m)]; // at most 5% of the right answers lie below it
        if (t <= 1.0f / (float)k + 0.05f)
            t = 0;
    }
    free(right);
    return t >= 1.0f ? 0.999f : t;
}
