/* camclass — the models of a run: which bundle runs (--model, else the installed defaults), the
 * engine options of the command line, and one engine per distinct model the cameras name
 * (cameras.h), with the turns of the cameras that share one (engine_turns.h).
 *
 *   cc_run_models_choose(cli, path, ...);               // main: the first model, said on stderr
 *   ... main loads it into an engine (reloads replace that one) ...
 *   cc_run_models_first(&ms, path, sha256, engine);     // ms owns it from then on
 *   for each camera: cc_run_models_add(&ms, top, cam, name, &index);   // loads other models
 *   cc_run_models_share(&ms, &err);                     // turns where cameras share an engine
 *   cc_run_models_finish(&ms);                          // frees every engine
 *
 * Threads: the controlling thread, before the pipelines start and after they stopped. While
 * they run, a reload (model_reload.h, under app.h's reload_lock) writes a model's engine, sha256
 * and kept; nothing else changes. Ownership: see each field.
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
#include "file_hash.h"

struct cc_run_model {
    char path[PATH_MAX];           // the file a SIGHUP reads again
    char sha256[CC_SHA256_HEX];    // of the bundle running ("" when it could not be hashed):
                                   // a SIGHUP reloads when the file's differs; read by the
                                   // cameras' on_model during a reload's swap
    struct cc_engine *engine;      // the one its cameras run (a reload's after one); owned
    struct cc_engine *kept;        // an engine a reload replaced while a stopping camera may
                                   // still run it: freed at finish; owned; NULL mostly
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

/* ms holds one model: the run's first, at path (sha256: its file's when it was loaded, "" when
 * unknown), run by engine, which ms owns from now on. */
void cc_run_models_first(struct cc_run_models *ms, const char *path, const char *sha256,
                         struct cc_engine *engine);

/* The model of a camera whose settings are cam (top: the run's): the first one, or the
 * camera's own "model", loaded (top's --labels applied) the first time a camera names that
 * file. Its index into *index. Returns 0, or the exit status after one line on stderr naming
 * the camera (2: a model that cannot be read or used; 1: the engine cannot start). */
int cc_run_models_add(struct cc_run_models *ms, const struct cc_cli *top, const struct cc_cli *cam,
                      const char *name, int *index);

/* Turns for every engine two or more cameras run. False with err when out of memory. */
bool cc_run_models_share(struct cc_run_models *ms, struct cc_error *err);

/* Frees every engine and turns of ms; ms is empty again. */
void cc_run_models_finish(struct cc_run_models *ms);

#endif
