/* camclass — the CPU backend's layer-choice cache (internal to engine/cpu): one letter per
 * convolution and linear saying which way xnn_steps.c chose for it (step_letter's table), one
 * line per model, thread count, CPU and CAMCLASS_CPU_ISA ceiling, in
 * $XDG_CACHE_HOME/camclass/cpu-layer-choices-<format>.txt (or cc_engine_options.cpu_cache). */
#ifndef CC_XNN_CHOICES_H
#define CC_XNN_CHOICES_H

#include <stdbool.h>
#include <stdio.h>

#include "choice_watch.h"
#include "xnn_state.h"

/* Whether node n has a letter: a convolution (f32 one-group: BLIS, the stems, a fused block,
 * our GEMMs may run it; int8: a fused block, our int8 GEMM, stem or depthwise) or a linear. */
bool cc_xnn_has_choice(const struct cc_node *n);

/* The letter the cache remembers for node n (which has one); 0 when nothing is remembered. */
char cc_xnn_remembered(const struct xnn_state *s, int n);

/* The way of a STEP_DIRECT step: 0 direct, 1 Winograd F(2x2, 3x3), 2 F(4x4, 3x3) ("dwv"). */
int cc_xnn_direct_way(const struct cc_conv3x3 *p);

/* One build's use of the cache: its file, old text and key, the letters read from it
 * (s->remembered points into got while the build runs), and the watch over its timings
 * (s->watch points at it while the build runs). */
struct xnn_choices {
    char *path; // NULL: no cache (forced cpu_pointwise, or cpu_cache "")
    char *old;  // the file's text, NULL when none
    char key[320];
    char got[512];
    int count;                    // letters the model has
    struct cc_choice_watch watch; // whether the machine was quiet while the layers were timed
    FILE *notices;                // opts->notices: not owned; NULL = silent
};

/* Reads CAMCLASS_CPU_CROWDED (false with err naming a bad value) and the line of s's model,
 * thread count and CPU into c->got, and points s->remembered at it where the file has one that
 * fits (a bad file is no error: it is measured again); s->watch at c->watch. */
bool cc_xnn_choices_open(struct xnn_choices *c, struct xnn_state *s,
                         const struct cc_engine_options *opts, int threads, struct cc_error *err);

/* Writes s's built steps' letters as the model's line, unless they came from the file or a
 * CAMCLASS_CPU_* switch forced a way (the file is then read, not written), or the machine was
 * crowded while they were timed (choice_watch.h: then one line on opts->notices says so and
 * why); a file that cannot be written is not an error. Then forgets the letters
 * (s->remembered = NULL) and the watch (s->watch = NULL) and frees c. */
void cc_xnn_choices_close(struct xnn_choices *c, struct xnn_state *s, bool built);

#endif
