/* camclass — where the window's screenshots go without --screenshot-dir (see cli.h
 * cc_cli_pictures_dir): XDG's pictures folder, as xdg-user-dir finds it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static bool is_dir(const char *path)
{
    struct stat st;
    return path && *path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* XDG_PICTURES_DIR="..." of a user-dirs.dirs file (a shell fragment: only the form that
 * xdg-user-dirs-update writes, a double-quoted value with $HOME as its only variable) into out;
 * false when the file or the line is not there. */
static bool user_dirs_pictures(const char *file, const char *home, char *out, size_t size)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return false;
    char line[1024];
    bool found = false;
    while (fgets(line, sizeof(line), f)) {
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp(p, "XDG_PICTURES_DIR=\"", 18) != 0)
            continue;
        p += 18;
        const char *end = strchr(p, '"');
        if (!end)
            continue;
        int n = (int)(end - p);
        if (strncmp(p, "$HOME", 5) == 0 && (n == 5 || p[5] == '/'))
            snprintf(out, size, "%s%.*s", home ? home : "", n - 5, p + 5);
        else if (p[0] == '/')
            snprintf(out, size, "%.*s", n, p);
        else
            continue; // relative paths are not valid there (user-dirs.dirs(5))
        found = true; // the last assignment wins, as in the shell
    }
    fclose(f);
    return found;
}

/* True when a and b name the same directory ("/home/u" and "/home/u/"). */
static bool same_dir(const char *a, const char *b)
{
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

const char *cc_cli_pictures_dir(const char *xdg_pictures, const char *config_home, const char *home,
                                char *out, size_t size)
{
    if (is_dir(xdg_pictures)) {
        snprintf(out, size, "%s", xdg_pictures);
        return "XDG_PICTURES_DIR";
    }
    char file[4096], dir[4096];
    if (config_home && *config_home)
        snprintf(file, sizeof(file), "%s/user-dirs.dirs", config_home);
    else
        snprintf(file, sizeof(file), "%s/.config/user-dirs.dirs", home ? home : "");
    if ((config_home && *config_home) || (home && *home)) {
        // An entry of $HOME itself disables the directory (user-dirs.dirs(5)).
        if (user_dirs_pictures(file, home, dir, sizeof(dir)) && is_dir(dir) &&
            !same_dir(dir, home)) {
            snprintf(out, size, "%s", dir);
            return "user-dirs.dirs";
        }
    }
    if (home && *home) {
        snprintf(dir, sizeof(dir), "%s/Pictures", home);
        if (is_dir(dir)) {
            snprintf(out, size, "%s", dir);
            return "~/Pictures";
        }
    }
    snprintf(out, size, ".");
    return "the working directory";
}
