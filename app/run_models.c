/* camclass — the models of a run (see run_models.h). */
#include "run_models.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "assets.h"
#include "bundle.h"
#include "cam.h"

#define IMAGENET_MODEL "models/mobilenet_v2-imagenet.ccm"
#define SELFTEST_MODEL "models/selftest.ccm"

enum { EXIT_USAGE = 2 };

bool cc_run_models_choose(const struct cc_cli *cli, char *path, size_t size, struct cc_error *err)
{
    if (cli->model) {
        snprintf(path, size, "%s", cli->model);
        if (access(path, R_OK) != 0)
            return cc_error_set(err, "cannot read model %s: %s", path, strerror(errno));
        return true;
    }
    enum cc_asset_root root;
    // The self-test checks the self-test model: its sample holds vivid's patterns.
    if (cli->selftest && cc_asset_find(SELFTEST_MODEL, path, size, NULL)) {
        fprintf(stderr, "camclass: model %s (the self-test model)\n", path);
        return true;
    }
    if (cc_asset_find(IMAGENET_MODEL, path, size, NULL)) {
        fprintf(stderr, "camclass: model %s (ImageNet mobilenet_v2)\n", path);
        return true;
    }
    if (cc_asset_find(SELFTEST_MODEL, path, size, &root)) {
        // The fetch tool of the tree this model came from: the source tree's script, or the
        // installed command (a system without the source tree has no tools/ folder).
        fprintf(stderr,
                "camclass: model %s (the self-test model: vivid test patterns; "
                "%s installs the ImageNet model)\n",
                path,
                root == CC_ASSET_SOURCE ? "tools/camclass-fetch-imagenet"
                                        : "camclass-fetch-imagenet");
        return true;
    }
    char where[CC_ASSET_WHERE_SIZE];
    cc_asset_where(where, sizeof(where));
    return cc_error_set(err,
                        "no model: neither %s nor %s is in %s; give one with --model, or "
                        "install one with camclass-fetch-imagenet",
                        IMAGENET_MODEL, SELFTEST_MODEL, where);
}

struct cc_engine_options cc_run_models_options(const struct cc_cli *cli)
{
    struct cc_engine_options opt = cc_engine_options_default();
    opt.backend = cli->backend;
    opt.device_index = cli->device;
    opt.cpu_threads = cli->threads;
    opt.profile = cli->profile;
    opt.notices = stderr;
    // A Vulkan device lost (or out of memory) mid-run: the CPU backend takes over and frames
    // keep coming, also after an explicit --backend vulkan (one line on stderr says so).
    opt.cpu_fallback = true;
    opt.vk_fault = cli->vk_fault;
    return opt;
}

void cc_run_models_first(struct cc_run_models *ms, const char *path, const char *sha256,
                         struct cc_engine *engine)
{
    *ms = (struct cc_run_models){.n = 1};
    snprintf(ms->m[0].path, sizeof(ms->m[0].path), "%s", path);
    snprintf(ms->m[0].sha256, sizeof(ms->m[0].sha256), "%s", sha256);
    ms->m[0].engine = engine;
}

/* The engine of the bundle at path (labels: --labels, or NULL). Exit status as
 * cc_run_models_add. */
static int load_engine(const struct cc_cli *top, const char *path, struct cc_engine **out)
{
    struct cc_error err = {0};
    struct cc_model *m = cc_bundle_load(path, &err);
    if (!m || (top->labels && !cc_bundle_replace_labels(m, top->labels, &err))) {
        fprintf(stderr, "camclass: %s\n", err.msg);
        cc_model_destroy(m);
        return EXIT_USAGE;
    }
    struct cc_engine_options opt = cc_run_models_options(top);
    if (!(*out = cc_cam_engine_create(m, &opt, &err))) { // takes m, also on failure
        fprintf(stderr, "camclass: %s\n", err.msg);
        return 1;
    }
    return 0;
}

int cc_run_models_add(struct cc_run_models *ms, const struct cc_cli *top, const struct cc_cli *cam,
                      const char *name, int *index)
{
    int i = 0, rc = 0;
    if (cam->model && cam->model != top->model) {
        struct cc_error err = {0};
        char path[PATH_MAX];
        if (!cc_run_models_choose(cam, path, sizeof(path), &err)) {
            fprintf(stderr, "camclass: camera %s: %s\n", name ? name : "", err.msg);
            return EXIT_USAGE;
        }
        while (i < ms->n && strcmp(ms->m[i].path, path) != 0)
            i++;
        if (i == ms->n) {
            struct cc_run_model *rm = &ms->m[i];
            snprintf(rm->path, sizeof(rm->path), "%s", path);
            if ((rc = load_engine(top, path, &rm->engine)))
                return rc;
            if (!cc_sha256_file(path, rm->sha256, &err)) // as loaded a moment ago
                rm->sha256[0] = '\0';
            ms->n++;
        }
    }
    ms->m[i].users++;
    *index = i;
    return 0;
}

bool cc_run_models_share(struct cc_run_models *ms, struct cc_error *err)
{
    for (int i = 0; i < ms->n; i++)
        if (ms->m[i].users > 1 && !(ms->m[i].turns = cc_engine_turns_create(err)))
            return false;
    return true;
}

void cc_run_models_finish(struct cc_run_models *ms)
{
    for (int i = 0; i < ms->n; i++) {
        cc_engine_destroy(ms->m[i].engine);
        cc_engine_destroy(ms->m[i].kept);
        cc_engine_turns_destroy(ms->m[i].turns);
    }
    *ms = (struct cc_run_models){0};
}
