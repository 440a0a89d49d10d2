/* camclass — `camclass --selftest`: classify the sample clip and check the model's accuracy.
 *
 * The sample (assets/samples/selftest/, or --input) is either
 *   - a folder of images (PNG/JPEG, read in byte order of their names, as source_file.h does)
 *     with "labels.txt": one true label per line, in that order (tools/train_selftest.py
 *     `sample` writes NNN-<class>.png and labels.txt); without labels.txt, each name gives
 *     its label: "[NNN-]<label>[-anything].png" ("-", " ", "%" and "_" are all separators,
 *     case is ignored, the longest matching model label wins); or
 *   - a .y4m clip (or a folder holding one) with "<clip>.labels" or "labels.txt" next to it:
 *     one true label per line, in frame order.
 * The minimum top-1 accuracy comes from "selftest.json" in the sample folder:
 *   {"min_top1": 0.98}  or  {"min_top1": {"selftest.ccm": 0.98, "selftest-int8.ccm": 0.97}}
 * (keys: the bundle's file name, the same without .ccm, or the manifest's "name"; a figure
 * above 1 is read as a percentage), unless min_top1 >= 0 is passed in (the command line's
 * --threshold). Without either the self-test fails: there is nothing to check against.
 *
 * Prints one line per class (frames, correct, accuracy, the most common wrong answer) and the
 * total to out. Returns the exit status: 0 at or above the minimum, 1 below it (or on a run
 * failure), 2 when the model or the sample cannot be read.
 */
#ifndef CC_SELFTEST_H
#define CC_SELFTEST_H

#include <stdio.h>

#include "engine.h"

/* labels_path: --labels, a file whose lines replace the bundle's labels; NULL: the bundle's. */
int cc_selftest_run(const char *model_path, const char *labels_path, const char *sample,
                    const struct cc_engine_options *opts, double min_top1, FILE *out);

#endif
