/* camclass — GPIO lines that follow detections (see gpio_out.h).
 *
 * libgpiod's v1 API is used as its own tools (gpioset, gpioinfo) use it: the chip opened with
 * gpiod_chip_open_lookup, the line taken by offset (gpiod_chip_get_line) or found by name
 * (gpiod_chip_find_line), requested as an output with a consumer name and a default value
 * (gpiod_line_request_output_flags, GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW for --gpio-active-low),
 * set with gpiod_line_set_value, released with gpiod_line_release. A request failing with
 * EBUSY names the line's consumer (gpiod_line_update, gpiod_line_consumer). libgpiod keeps no
 * global state: nothing to set up once.
 */
#include "gpio_out.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpiod.h>

#define SPEC_FORM "give LABEL=CHIP:LINE, e.g. cat=gpiochip0:17"

/* One --gpio spec. Specs that name the same chip line share it: the first requests it (first
 * == its own index), the others point at it, and it is high while any of their labels is. */
struct out_line {
    struct cc_gpio_spec spec;
    struct gpiod_chip *chip; // owned: one handle per spec (a chip may be opened twice)
    struct gpiod_line *line; // the chip's; requested by us when requested is true
    bool requested;
    int first; // index of the spec that requested this chip line
};

struct cc_gpio_out {
    int n;
    struct out_line lines[CC_GPIO_MAX_LINES];
};

/* ------------------------------------------------------------------------------------------
 * The spec
 */

// Copies [from, to) into out (size bytes); false when it does not fit.
static bool copy_part(const char *from, const char *to, char *out, size_t size)
{
    size_t n = (size_t)(to - from);
    if (n >= size)
        return false;
    memcpy(out, from, n);
    out[n] = 0;
    return true;
}

bool cc_gpio_out_parse(const char *spec, struct cc_gpio_spec *out, struct cc_error *err)
{
    const char *eq = strrchr(spec, '=');
    const char *colon = eq ? strrchr(eq + 1, ':') : NULL;
    if (!eq || !colon)
        return cc_error_set(err, "--gpio \"%s\": no %s; " SPEC_FORM, spec,
                            eq ? "':' between the chip and the line" : "'=' after the label");
    if (eq == spec)
        return cc_error_set(err, "--gpio \"%s\": no label before '='; " SPEC_FORM, spec);
    if (colon == eq + 1)
        return cc_error_set(err, "--gpio \"%s\": no chip between '=' and ':'; " SPEC_FORM, spec);
    if (!colon[1])
        return cc_error_set(err, "--gpio \"%s\": no line after ':'; " SPEC_FORM, spec);
    if (!copy_part(spec, eq, out->label, sizeof(out->label)))
        return cc_error_set(err, "--gpio: the label is longer than %d bytes",
                            CC_GPIO_LABEL_MAX - 1);
    if (!copy_part(eq + 1, colon, out->chip, sizeof(out->chip)) ||
        !copy_part(colon + 1, colon + strlen(colon), out->line, sizeof(out->line)))
        return cc_error_set(err, "--gpio \"%s\": a chip or line name longer than %d bytes", spec,
                            CC_GPIO_NAME_MAX - 1);
    return true;
}

const char *cc_gpio_out_unknown_label(const char *const *specs, int n_specs,
                                      const char *const *labels, int n_labels,
                                      struct cc_gpio_spec *scratch)
{
    for (int i = 0; i < n_specs && n_labels > 0; i++) {
        if (!cc_gpio_out_parse(specs[i], scratch, NULL))
            continue;
        bool known = false;
        for (int k = 0; k < n_labels && !known; k++)
            known = labels[k] && strcmp(labels[k], scratch->label) == 0;
        if (!known)
            return scratch->label;
    }
    return NULL;
}

/* The offset of an all-digits line; -1 for a line name. */
static long line_offset(const char *line)
{
    if (strspn(line, "0123456789") != strlen(line) || strlen(line) > 9)
        return -1;
    return strtol(line, NULL, 10);
}

/* ------------------------------------------------------------------------------------------
 * Requesting a line
 */

static bool chip_error(const struct cc_gpio_spec *s, int e, struct cc_error *err)
{
    if (e == ENOENT || e == ENODEV)
        return cc_error_set(err,
                            "--gpio %s=%s:%s: no GPIO chip \"%s\" (a name such as gpiochip0, a "
                            "/dev path, a chip label or a number; ls /dev/gpiochip* lists them)",
                            s->label, s->chip, s->line, s->chip);
    if (e == EACCES || e == EPERM)
        return cc_error_set(err,
                            "--gpio %s=%s:%s: GPIO chip %s: %s; add the user to the group that "
                            "owns /dev/gpiochip* (gpio on Raspberry Pi OS) and log in again",
                            s->label, s->chip, s->line, s->chip, strerror(e));
    return cc_error_set(err, "--gpio %s=%s:%s: GPIO chip %s: %s", s->label, s->chip, s->line,
                        s->chip, strerror(e));
}

/* The line of spec s on chip c; NULL with err. */
static struct gpiod_line *find_line(struct gpiod_chip *c, const struct cc_gpio_spec *s,
                                    struct cc_error *err)
{
    long offset = line_offset(s->line);
    unsigned n = gpiod_chip_num_lines(c);
    if (offset >= 0 && (unsigned long)offset >= n) {
        cc_error_set(err, "--gpio %s=%s:%s: %s (%s) has lines 0 to %u; line %ld is not one of them",
                     s->label, s->chip, s->line, gpiod_chip_name(c), gpiod_chip_label(c), n - 1,
                     offset);
        return NULL;
    }
    errno = 0;
    struct gpiod_line *l =
        offset >= 0 ? gpiod_chip_get_line(c, (unsigned)offset) : gpiod_chip_find_line(c, s->line);
    if (!l && offset < 0 && (errno == ENOENT || errno == 0))
        cc_error_set(err,
                     "--gpio %s=%s:%s: %s (%s) has no line named \"%s\"; give its number or one "
                     "of the names gpioinfo lists",
                     s->label, s->chip, s->line, gpiod_chip_name(c), gpiod_chip_label(c), s->line);
    else if (!l)
        cc_error_set(err, "--gpio %s=%s:%s: line %s of %s: %s", s->label, s->chip, s->line, s->line,
                     gpiod_chip_name(c), strerror(errno));
    return l;
}

/* The request failed with e: say why, naming who holds a busy line. */
static bool request_error(const struct out_line *o, int e, struct cc_error *err)
{
    const struct cc_gpio_spec *s = &o->spec;
    const char *chip = gpiod_chip_name(o->chip);
    if (e != EBUSY)
        return cc_error_set(err, "--gpio %s=%s:%s: line %s of %s cannot be an output: %s", s->label,
                            s->chip, s->line, s->line, chip, strerror(e));
    const char *consumer = gpiod_line_update(o->line) == 0 ? gpiod_line_consumer(o->line) : NULL;
    return cc_error_set(err,
                        "--gpio %s=%s:%s: line %s of %s is busy: used by \"%s\"; stop that "
                        "program (or release the line) or choose another line",
                        s->label, s->chip, s->line, s->line, chip,
                        consumer && *consumer ? consumer : "another user");
}

/* The index of the first spec of g before i on the same chip line as spec i; i when none. */
static int first_of(const struct cc_gpio_out *g, int i)
{
    const struct out_line *o = &g->lines[i];
    for (int k = 0; k < i; k++) {
        const struct out_line *p = &g->lines[k];
        if (gpiod_line_offset(p->line) == gpiod_line_offset(o->line) &&
            strcmp(gpiod_chip_name(p->chip), gpiod_chip_name(o->chip)) == 0)
            return p->first;
    }
    return i;
}

/* Opens spec i's chip and finds its line; requests it unless an earlier spec did. */
static bool request_line(struct cc_gpio_out *g, int i, const struct cc_gpio_out_config *cfg,
                         struct cc_error *err)
{
    struct out_line *o = &g->lines[i];
    errno = 0;
    if (!(o->chip = gpiod_chip_open_lookup(o->spec.chip)))
        return chip_error(&o->spec, errno ? errno : ENOENT, err);
    if (!(o->line = find_line(o->chip, &o->spec, err)))
        return false;
    if ((o->first = first_of(g, i)) != i)
        return true; // shared with an earlier spec
    int flags = cfg->active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    if (gpiod_line_request_output_flags(o->line, cfg->consumer, flags, 0) != 0)
        return request_error(o, errno, err);
    o->requested = true;
    return true;
}

struct cc_gpio_out *cc_gpio_out_create(const struct cc_gpio_out_config *cfg, struct cc_error *err)
{
    if (cfg->n_specs < 1 || cfg->n_specs > CC_GPIO_MAX_LINES) {
        cc_error_set(err, "--gpio: give 1 to %d lines, not %d", CC_GPIO_MAX_LINES, cfg->n_specs);
        return NULL;
    }
    struct cc_gpio_out *g = calloc(1, sizeof(*g));
    if (!g) {
        cc_error_set(err, "out of memory");
        return NULL;
    }
    for (int i = 0; i < cfg->n_specs; i++) // every spec is checked before a device is touched
        if (!cc_gpio_out_parse(cfg->specs[i], &g->lines[i].spec, err))
            goto error;
    for (int i = 0; i < cfg->n_specs; i++) {
        g->n = i + 1; // destroy closes line i's chip too if its request fails
        if (!request_line(g, i, cfg, err))
            goto error;
    }
    return g;

error:
    cc_gpio_out_destroy(g);
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * Values
 */

bool cc_gpio_out_set(struct cc_gpio_out *g, const char *label, struct cc_error *err)
{
    bool ok = true;
    for (int i = 0; i < g->n; i++) {
        struct out_line *o = &g->lines[i];
        int v = 0; // high while the label of any spec sharing the line is detected
        for (int k = i; k < g->n && label && *label; k++)
            v |= g->lines[k].first == i && strcmp(g->lines[k].spec.label, label) == 0;
        if (o->requested && gpiod_line_set_value(o->line, v) != 0 && ok)
            ok = cc_error_set(err, "gpio: setting line %s of %s to %d failed: %s", o->spec.line,
                              gpiod_chip_name(o->chip), v, strerror(errno));
    }
    return ok;
}

bool cc_gpio_out_detection(struct cc_gpio_out *g, const struct cc_detection *d,
                           struct cc_error *err)
{
    switch (d->kind) {
    case CC_DETECTION_NONE:
        return true;
    case CC_DETECTION_ONSET:
    case CC_DETECTION_CHANGE:
        return cc_gpio_out_set(g, d->now.label, err);
    case CC_DETECTION_CLEAR:
        return cc_gpio_out_set(g, NULL, err);
    }
    return true;
}

void cc_gpio_out_destroy(struct cc_gpio_out *g)
{
    if (!g)
        return;
    // Low first: many chips (the Raspberry Pi's among them) keep driving a released output at
    // its last level.
    cc_gpio_out_set(g, NULL, NULL);
    for (int i = 0; i < g->n; i++) {
        if (g->lines[i].requested)
            gpiod_line_release(g->lines[i].line);
        if (g->lines[i].chip)
            gpiod_chip_close(g->lines[i].chip);
    }
    free(g);
}
