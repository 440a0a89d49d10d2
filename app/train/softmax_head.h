/* camclass-train — a new classifier head on feature vectors: multinomial logistic regression
 * (softmax over K classes) with L2 on the weights and class weights against unbalanced classes,
 * minimised with L-BFGS (Debian's liblbfgs: lbfgs(), the reference implementation of Nocedal's
 * method; this module only gives it the loss and its gradient).
 *
 * The features are standardised (mean 0, deviation 1 per feature, from the training rows) while
 * training, and the result folded back into w and b, so the head reads the backbone's raw
 * features. With held-out rows, training stops once their loss has not improved for 10 L-BFGS
 * iterations, and the weights of the best held-out loss are kept (early stopping).
 */
#ifndef CC_SOFTMAX_HEAD_H
#define CC_SOFTMAX_HEAD_H

#include <stdbool.h>

#include "error.h"

/* Rows of a feature matrix: x (n x dim, row-major), their classes y (n). Borrowed. */
struct cc_rows {
    const float *x;
    const int *y;
    int n;
};

struct cc_head_fit {
    int iterations;            // L-BFGS iterations run
    int best_iteration;        // whose weights were kept
    double train_loss, held_loss; // mean cross-entropy (unweighted) at the kept weights
    const char *stop;          // why training ended (liblbfgs's status, or early stopping)
};

/* Trains on train (and stops early on held, which may have n == 0): w (k x dim) and b (k) are
 * written. l2: the weight decay (on standardised features). False with err (out of memory, or
 * liblbfgs failed before any progress). */
bool cc_softmax_head_train(const struct cc_rows *train, const struct cc_rows *held, int dim,
                           int k, double l2, float *w, float *b, struct cc_head_fit *fit,
                           struct cc_error *err);

/* The class of each row of r under (w, b): out[i] = argmax (w x_i + b), and its softmax
 * probability in prob[i] (prob may be NULL). */
void cc_softmax_head_predict(const struct cc_rows *r, int dim, int k, const float *w,
                             const float *b, int *out, float *prob);

/* The rejection threshold of "unknown" (model.h output.unknown_threshold) from the held-out
 * answers: the top probability below which at most 5% of the right answers fall, so that a
 * picture the head is as unsure of as of its worst right answers is called unknown. 0 (none)
 * with fewer than 10 right answers, or when that probability is within 0.05 of chance (1/k). */
float cc_softmax_head_unknown_threshold(const int *truth, const int *pred, const float *prob,
                                        int n, int k);

#endif
