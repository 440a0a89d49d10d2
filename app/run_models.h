/* camclass — the models of a run: which bundle runs (--model, else the installed defaults), the
 * engine options of the command line, and one engine per distinct model the cameras name
 * (cameras.h), with the turns of the cameras that share one (engine_turns.h).
 *
 *   cc_run_models_choose(cli, path, ...);               // main: the first model, said on stderr
 *   ... main loads it into an engine (reloads replace that one) ...
 *   cc_run_models_first(&ms, path, engine);             // not owned by ms
 *   for each camera: cc_run_models_add(&ms, top, cam, name, &index);   // loads other models
 *   cc_run_models_share(&ms, &err);                     // turns where cameras share an engine
 *   cc_run_models_finish(&ms);                          // frees all but the first engine
 *
 * Threads: the controlling thread only. Ownership: see each field.
 */
#ifndef CC_RUN_MODELS_H
#define CC_RUN_MODELS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "cameras.h"
#include "cli.h"
#include "engine.h"
#include "engine_turns.h"
#include "error.h"

struct cc_run_model {
    char path[PATH_MAX];
    struct cc_engine *engine;      // [0]: the caller's; the others owned
    struct cc_engine_turns *turns; // owned; NULL while one camera uses the engine
    int users;                     // cameras that run it
};

struct cc_run_models {
    struct cc_run_model m[CC_CAMERAS_MAX];
    int n;
};

/* The model path of cli into path: --model (readable), else the ImageNet model, else the
 * self-test model (the self-test first with --selftest), found as the assets are; one line on
 * stderr says which default it took. False with err when there is none. */
bool cc_run_models_choose(const struct cc_cli *cli, char *path, size_t size, struct cc_error *err);

/* The engine options of the command line, for the start, a camera's model and a reload. */
struct cc_engine_options cc_run_models_options(const struct cc_cli *cli);

/* ms holds one model: the run's first, at path, run by engine (the caller's). */
void cc_run_models_first(struct cc_run_models *ms, const char *path, struct cc_engine *engine);

/* The model of a camera whose settings are cam (top: the run's): the first one, or the
 * camera's own "model", loaded (top's --labels applied) the first time a camera names that
 * file. Its index into *index. Returns 0, or the exit status after one line on stderr naming
 * the camera (2: a model that cannot be read or used; 1: the engine cannot start). */
int cc_run_models_add(struct cc_run_models *ms, const struct cc_cli *top, const struct cc_cli *cam,
                      const char *name, int *index);

/* Turns for every engine two or more cameras run. False with err when out of memory. */
bool cc_run_models_share(struct cc_run_models *ms, struct cc_error *err);

/* Frees the engines ms owns (not the first) and every turns; ms is empty again. */
void cc_run_models_finish(struct cc_run_models *ms);

#endif
