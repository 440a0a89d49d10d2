/* camclass — GPIO lines that follow detections (--gpio LABEL=CHIP:LINE): a line is driven
 * high (active) while LABEL is the detected label (detector.h's decision, the one the log,
 * MQTT and --on-event use) and low otherwise. This module owns libgpiod (its v1 API, Debian
 * 12's libgpiod 1.6); nothing of it leaks into this header.
 *
 *   struct cc_gpio_out *g = cc_gpio_out_create(&cfg, &err); // every line requested, low
 *   per detector decision:   cc_gpio_out_detection(g, &d, &err);
 *   at exit (SIGTERM too):   cc_gpio_out_destroy(g);          // low first, then released
 *
 * CHIP is what gpiod_chip_open_lookup takes: a name (gpiochip0), a path (/dev/gpiochip0), a
 * chip label (pinctrl-bcm2711) or a number; LINE an offset (17) or a line name (GPIO17). The
 * spec is split at its last '=' and then at its last ':' (chip labels such as INT34C5:00 keep
 * their colon when a line follows). A label may drive several lines, and a line may follow
 * several labels (given once per label): it is high while any of them is detected.
 * Threads: create and destroy on the controlling thread; cc_gpio_out_set/_detection from one
 * thread at a time (the inference thread) between them.
 * Ownership: the module copies what it keeps from the config; it owns its chip handles.
 */
#ifndef CC_GPIO_OUT_H
#define CC_GPIO_OUT_H

#include <stdbool.h>

#include "detector.h"
#include "error.h"

enum {
    CC_GPIO_MAX_LINES = 32,  // --gpio given at most this often
    CC_GPIO_LABEL_MAX = 256, // bytes of a label, with its terminating zero
    CC_GPIO_NAME_MAX = 128,  // bytes of a chip or line name, with its terminating zero
};

/* One --gpio value, split. */
struct cc_gpio_spec {
    char label[CC_GPIO_LABEL_MAX]; // the class label that drives the line
    char chip[CC_GPIO_NAME_MAX];   // as given
    char line[CC_GPIO_NAME_MAX];   // as given: digits are an offset, anything else a name
};

/* Splits "LABEL=CHIP:LINE". Pure (no device is touched). False with err (one line naming the
 * spec, what is wrong and the form to use) on a bad spec. */
bool cc_gpio_out_parse(const char *spec, struct cc_gpio_spec *out, struct cc_error *err);

/* The label of the first well-formed spec that is none of labels[0..n_labels-1] (a typo, or a
 * class of another model: its lines would never go high); NULL when every one is, or when the
 * model has no labels. Pure. */
const char *cc_gpio_out_unknown_label(const char *const *specs, int n_specs,
                                      const char *const *labels, int n_labels,
                                      struct cc_gpio_spec *scratch);

struct cc_gpio_out_config {
    const char *const *specs; // "LABEL=CHIP:LINE" each
    int n_specs;              // 1 to CC_GPIO_MAX_LINES
    bool active_low;          // --gpio-active-low: "high" (detected) is the low level
    const char *consumer;     // the name the kernel shows for the lines ("camclass")
};

struct cc_gpio_out;

/* Parses every spec, then opens the chips and requests each line as an output, inactive (low).
 * NULL with err (one line: the spec, the problem and the way out) on a bad spec, a chip or
 * line that is not there, a line in use (naming its consumer), no permission; nothing stays
 * requested then. */
struct cc_gpio_out *cc_gpio_out_create(const struct cc_gpio_out_config *cfg, struct cc_error *err);

/* Drives every line of label high (active) and every other line low; label NULL or "": none
 * detected. False with err (the first line that failed) when a value cannot be set; the other
 * lines are still set. */
bool cc_gpio_out_set(struct cc_gpio_out *g, const char *label, struct cc_error *err);

/* What a detector decision means for the lines: onset and change set the new label, clear sets
 * none, CC_DETECTION_NONE changes nothing. As cc_gpio_out_set. */
bool cc_gpio_out_detection(struct cc_gpio_out *g, const struct cc_detection *d,
                           struct cc_error *err);

/* Sets every line low (inactive), releases it and closes the chips; accepts NULL. */
void cc_gpio_out_destroy(struct cc_gpio_out *g);

#endif
