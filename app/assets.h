/* assets — where camclass finds its data: the default models (models/NAME.ccm) and the sample clip
 * (samples/selftest), and whether it runs installed (then it reads the installed config).
 *
 * The folders, in the order they are searched (enum cc_asset_root): $CAMCLASS_DATADIR;
 * $XDG_DATA_HOME/camclass, else ~/.local/share/camclass (the user's: camclass-fetch-imagenet
 * puts the ImageNet model there, found with no reinstall); <exe>/../share/camclass (an installed
 * tree, also one moved with meson install --destdir); the source tree's assets/ (a build-tree
 * camclass; only when it exists); the configured <datadir>/camclass. meson gives the paths of
 * the prefix it installs to (app/meson.build: CAMCLASS_DATADIR, CAMCLASS_SOURCE_ASSETS,
 * CAMCLASS_BINDIR; defaults in cli.h), so what is searched is what was installed.
 *
 * No state: every call reads the environment and the file system afresh.
 */
#ifndef CC_ASSETS_H
#define CC_ASSETS_H

#include <stdbool.h>
#include <stddef.h>

enum cc_asset_root {
    CC_ASSET_ENV,    // $CAMCLASS_DATADIR
    CC_ASSET_USER,   // $XDG_DATA_HOME/camclass, else ~/.local/share/camclass
    CC_ASSET_EXE,    // <exe>/../share/camclass
    CC_ASSET_SOURCE, // the source tree's assets/ (tools/camclass-fetch-imagenet's)
    CC_ASSET_DATA,   // the configured <datadir>/camclass (camclass-fetch-imagenet --system's)
    CC_ASSET_ROOTS
};

// Room for cc_asset_where's list of every folder.
enum { CC_ASSET_WHERE_SIZE = CC_ASSET_ROOTS * 4200 };

/* Finds rel ("models/x.ccm") in the folders, in order; writes its real path to out and, when
 * root is not NULL, the folder it was found in to *root. False when it is in none. */
bool cc_asset_find(const char *rel, char *out, size_t size, enum cc_asset_root *root);

/* The folders searched, for an error message: "A, B or C" into out. */
void cc_asset_where(char *out, size_t size);

/* True when this executable runs from the bindir it is installed to (not from a build tree or
 * a --destdir copy): then camclass reads the installed config. */
bool cc_asset_running_installed(void);

#endif
