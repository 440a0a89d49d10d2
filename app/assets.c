/* assets — where camclass finds its models and sample clip; see assets.h. */
#include "assets.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h" // CAMCLASS_DATADIR, CAMCLASS_BINDIR defaults

#ifndef CAMCLASS_SOURCE_ASSETS // the source tree's assets/, for runs from the build tree
#define CAMCLASS_SOURCE_ASSETS ""
#endif

struct roots {
    char path[CC_ASSET_ROOTS][PATH_MAX + 32]; // "" where there is none
};

/* The folder of the running executable (no trailing slash) into dir; false when unknown. */
static bool exe_dir(char *dir, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", dir, size - 1);
    if (n <= 0)
        return false;
    dir[n] = 0;
    char *slash = strrchr(dir, '/');
    if (!slash)
        return false;
    *slash = 0;
    return true;
}

static void roots_init(struct roots *r)
{
    *r = (struct roots){0};
    const size_t size = sizeof(r->path[0]);
    const char *env = getenv("CAMCLASS_DATADIR");
    if (env && *env)
        snprintf(r->path[CC_ASSET_ENV], size, "%s", env);
    // The XDG base directory rule: a relative $XDG_DATA_HOME is ignored, as an unset one.
    const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/')
        snprintf(r->path[CC_ASSET_USER], size, "%s/camclass", xdg);
    else if (home && home[0] == '/')
        snprintf(r->path[CC_ASSET_USER], size, "%s/.local/share/camclass", home);
    char exe[PATH_MAX];
    if (exe_dir(exe, sizeof(exe)))
        snprintf(r->path[CC_ASSET_EXE], size, "%s/../share/camclass", exe);
    // Only when it is there: an installed camclass names no source tree the system lacks.
    struct stat st;
    if (*CAMCLASS_SOURCE_ASSETS && stat(CAMCLASS_SOURCE_ASSETS, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(r->path[CC_ASSET_SOURCE], size, "%s", CAMCLASS_SOURCE_ASSETS);
    snprintf(r->path[CC_ASSET_DATA], size, "%s", CAMCLASS_DATADIR);
}

bool cc_asset_find(const char *rel, char *out, size_t size, enum cc_asset_root *root)
{
    struct roots r;
    roots_init(&r);
    for (int i = 0; i < CC_ASSET_ROOTS; i++) {
        if (!r.path[i][0])
            continue;
        snprintf(out, size, "%s/%s", r.path[i], rel);
        if (access(out, R_OK) == 0) {
            char real[PATH_MAX];
            if (realpath(out, real)) // "/usr/share/...", not "/usr/bin/../share/..."
                snprintf(out, size, "%s", real);
            if (root)
                *root = (enum cc_asset_root)i;
            return true;
        }
    }
    return false;
}

void cc_asset_where(char *out, size_t size)
{
    struct roots r;
    roots_init(&r);
    int last = -1;
    for (int i = 0; i < CC_ASSET_ROOTS; i++)
        if (r.path[i][0])
            last = i;
    size_t len = 0;
    out[0] = 0;
    for (int i = 0, k = 0; i < CC_ASSET_ROOTS && len < size; i++) {
        if (!r.path[i][0])
            continue;
        const char *sep = k++ == 0 ? "" : i == last ? " or " : ", ";
        len += (size_t)snprintf(out + len, size - len, "%s%s", sep, r.path[i]);
    }
}

bool cc_asset_running_installed(void)
{
    char dir[PATH_MAX], real_bindir[PATH_MAX];
    return exe_dir(dir, sizeof(dir)) && realpath(CAMCLASS_BINDIR, real_bindir) &&
           strcmp(dir, real_bindir) == 0;
}
