/* camclass-train — a labelled image folder (torchvision's ImageFolder layout): DIR/<class>/<image>.
 *
 * Classes are the sub-folders, sorted by name (bytewise, as ImageFolder does); images are the
 * .jpg, .jpeg and .png files in them (case-insensitive), sorted, not searched recursively. A class
 * name must be a safe single path component (cc_dataset_class_name_ok), since camclass writes into
 * such folders too. The held-out split is stratified and seeded: the same folder and seed give
 * the same split.
 */
#ifndef CC_DATASET_H
#define CC_DATASET_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

struct cc_sample {
    char *path;    // owned
    int label;     // index into classes
    bool held_out; // in the held-out split
};

struct cc_dataset {
    char **classes; // (n_classes) owned names
    int n_classes;
    struct cc_sample *samples; // (n_samples) grouped by class, in name order; owned
    int n_samples;
    int *counts;      // (n_classes) images per class; owned
    int *held_counts; // (n_classes) of them held out; owned
};

enum { CC_DATASET_CLASS_MAX = 64 }; // bytes of a class name

/* Whether name can be a class: 1..64 bytes of letters, digits, '_', '-', '.', ' ' and UTF-8
 * beyond ASCII, not starting with '.' or ' ', not ending with ' '. */
bool cc_dataset_class_name_ok(const char *name);

/* NULL when name can be a class, else the rule it breaks, as the end of a sentence that starts
 * with the name ("is empty", "holds a '/' ...", "starts with '.' ..."). */
const char *cc_dataset_class_name_problem(const char *name);

/* The sorted sub-folders of dir (not starting with '.'), names malloc'd into *names (free with
 * cc_dataset_free_names): their count, or -1 with err when dir cannot be read. */
int cc_dataset_list_classes(const char *dir, char ***names, struct cc_error *err);

/* The .jpg, .jpeg and .png files (not starting with '.') in class_dir; -1 with err when it
 * cannot be read. */
int cc_dataset_count_images(const char *class_dir, struct cc_error *err);

void cc_dataset_free_names(char **names, int n);

/* Reads dir. False with err (one line, naming the folder and what to do): not a directory,
 * fewer than 2 classes, a class without images, an unsafe class name. */
bool cc_dataset_load(struct cc_dataset *d, const char *dir, struct cc_error *err);

/* Holds out round(fraction * count) images of each class (at least 1 where a class has 2 or
 * more and fraction > 0), chosen by seed. */
void cc_dataset_split(struct cc_dataset *d, double fraction, uint64_t seed);

void cc_dataset_finish(struct cc_dataset *d);

#endif
