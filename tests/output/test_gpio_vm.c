/* --gpio's lines (app/output/gpio_out.c) against the kernel's GPIO simulator, in the qemu guest
 * (tests/vm/run-vm.sh --gpio-sim; statically linked): a gpio-sim chip of 8 lines is made
 * through configfs, the detector (detector.c, the decision the log, MQTT and --on-event use)
 * reads a sequence of results, its decisions drive the lines through cc_gpio_out_detection, and
 * the simulator's own view of each line (sysfs .../sim_gpioN/value) is read back: high while
 * the label is detected, low after a change to another label and after a clear, low after
 * release; a second requester is refused with "busy" and the consumer's name; a line or chip
 * that is not there is one line naming it; --gpio-active-low inverts the levels; two labels on
 * one line share it.
 *
 *   test_gpio_vm            (in the guest: tests/vm/run-vm.sh --gpio-sim --bin … -- test_gpio_vm)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "detector.h"
#include "gpio_out.h"
#include "testutil.h"

#define SIM "/sys/kernel/config/gpio-sim/camclass"
#define BANK SIM "/gpio-bank0"
#define SIM_LABEL "camclass-sim"

/* The simulated chip: its name (gpiochipN) and platform device (gpio-sim.N). */
struct sim {
    char chip[64];
    char dev[64];
};

static bool write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    bool ok = f && fputs(text, f) >= 0;
    if (f && fclose(f) != 0)
        ok = false;
    return CHECKF(ok, "writing \"%s\" to %s: %s", text, path, strerror(errno));
}

static bool read_line(const char *path, char *out, size_t size)
{
    FILE *f = fopen(path, "r");
    bool ok = f && fgets(out, (int)size, f);
    if (f)
        fclose(f);
    out[ok ? strcspn(out, "\n") : 0] = 0;
    return CHECKF(ok, "reading %s: %s", path, strerror(errno));
}

/* Makes the chip: 8 lines, labelled SIM_LABEL, line 5 named "relay" (gpio-sim.rst). */
static bool make_sim(struct sim *s)
{
    if (!CHECKF(mkdir(SIM, 0755) == 0, "mkdir %s: %s (no gpio-sim in this kernel?)", SIM,
                strerror(errno)) ||
        !CHECKF(mkdir(BANK, 0755) == 0 && mkdir(BANK "/line5", 0755) == 0, "mkdir: %s",
                strerror(errno)))
        return false;
    return write_text(BANK "/num_lines", "8") && write_text(BANK "/label", SIM_LABEL) &&
           write_text(BANK "/line5/name", "relay") && write_text(SIM "/live", "1") &&
           read_line(BANK "/chip_name", s->chip, sizeof(s->chip)) &&
           read_line(SIM "/dev_name", s->dev, sizeof(s->dev));
}

/* The simulator's value of line (0/1), -1 when it cannot be read. */
static int sim_value(const struct sim *s, int line)
{
    char path[256], text[16];
    snprintf(path, sizeof(path), "/sys/devices/platform/%s/%s/sim_gpio%d/value", s->dev, s->chip,
             line);
    if (!read_line(path, text, sizeof(text)))
        return -1;
    return text[0] == '1' ? 1 : text[0] == '0' ? 0 : -1;
}

static void sim_pull(const struct sim *s, int line, const char *pull)
{
    char path[256];
    snprintf(path, sizeof(path), "/sys/devices/platform/%s/%s/sim_gpio%d/pull", s->dev, s->chip,
             line);
    write_text(path, pull);
}

/* Lines 3, 4 and 5 read l3, l4, l5. */
static void expect(const struct sim *s, const char *when, int l3, int l4, int l5)
{
    int v3 = sim_value(s, 3), v4 = sim_value(s, 4), v5 = sim_value(s, 5);
    CHECKF(v3 == l3 && v4 == l4 && v5 == l5, "%s: lines 3, 4, 5 = %d %d %d, want %d %d %d", when,
           v3, v4, v5, l3, l4, l5);
}

/* A result of one class, label (index i), with score p: a picture of its own (file set), so
 * the detector takes its score as it is and every other class's as 0. */
static struct cc_result result(int i, const char *label, float p)
{
    struct cc_result r = {.file = "frame.png", .n_top = 1};
    r.top[0] = (struct cc_result_class){i, label, p};
    return r;
}

/* One result through the detector, its decision to the lines. */
static void feed(struct cc_detector *d, struct cc_gpio_out *g, struct cc_result r)
{
    struct cc_detection det = cc_detector_update(d, &r);
    struct cc_error err = {""};
    CHECKF(cc_gpio_out_detection(g, &det, &err), "%s", err.msg);
}

static struct cc_gpio_out *create(const char *const *specs, int n, bool active_low,
                                  struct cc_error *err)
{
    struct cc_gpio_out_config cfg = {
        .specs = specs, .n_specs = n, .active_low = active_low, .consumer = "camclass"};
    return cc_gpio_out_create(&cfg, err);
}

/* The lines follow the detections; a second requester is refused; release leaves them low. */
static void test_follow(const struct sim *s)
{
    char by_name[128], by_path[128], other[128];
    snprintf(by_name, sizeof(by_name), "cat=%s:3", s->chip);
    snprintf(by_path, sizeof(by_path), "cat=/dev/%s:4", s->chip);
    snprintf(other, sizeof(other), "x=%s:3", s->chip);
    // Line 3 pulled up: it reads 1 until the request drives it low.
    sim_pull(s, 3, "pull-up");
    CHECK(sim_value(s, 3) == 1);
    const char *specs[] = {by_name, by_path, "dog=" SIM_LABEL ":relay"};
    struct cc_error err = {""};
    struct cc_gpio_out *g = create(specs, 3, false, &err);
    if (!CHECKF(g, "%s", err.msg))
        return;
    expect(s, "requested", 0, 0, 0);
    struct cc_detector_config dc = {.threshold = 0.5, .hysteresis = 0.1, .ewma_alpha = 0.3};
    struct cc_detector *d = cc_detector_create(&dc, &err);
    feed(d, g, result(0, "cat", 0.9f));
    expect(s, "cat detected", 1, 1, 0);
    feed(d, g, result(0, "cat", 0.95f));
    expect(s, "cat still detected", 1, 1, 0);

    // A second requester of a held line: refused, naming the holder.
    struct cc_error busy = {""};
    const char *again[] = {other};
    CHECK(!create(again, 1, false, &busy));
    CHECKF(strstr(busy.msg, "is busy: used by \"camclass\"") && strstr(busy.msg, "--gpio x=") &&
               !strchr(busy.msg, '\n'),
           "%s", busy.msg);

    feed(d, g, result(1, "dog", 0.9f));
    expect(s, "dog replaced cat", 0, 0, 1);
    feed(d, g, result(2, "bird", 0.3f));
    expect(s, "cleared", 0, 0, 0);
    feed(d, g, result(0, "cat", 0.8f));
    expect(s, "cat again", 1, 1, 0);
    // A model reload: the report forgets the detection and sets the lines low (report.c).
    cc_detector_forget(d);
    CHECK(cc_gpio_out_set(g, NULL, &err));
    expect(s, "forgotten", 0, 0, 0);
    feed(d, g, result(1, "dog", 0.9f));
    expect(s, "dog after the reload", 0, 0, 1);

    // Released while dog is detected: low (the pull of line 3 made low too: the simulator
    // shows the pull of a released line).
    sim_pull(s, 3, "pull-down");
    cc_gpio_out_destroy(g);
    cc_detector_destroy(d);
    expect(s, "released", 0, 0, 0);
    struct cc_gpio_out *g2 = create(again, 1, false, &err); // free again
    CHECKF(g2, "after release: %s", err.msg);
    cc_gpio_out_destroy(g2);
}

static void test_active_low(const struct sim *s)
{
    char spec[128];
    snprintf(spec, sizeof(spec), "cat=%s:6", s->chip);
    const char *specs[] = {spec};
    struct cc_error err = {""};
    struct cc_gpio_out *g = create(specs, 1, true, &err);
    if (!CHECKF(g, "%s", err.msg))
        return;
    CHECKF(sim_value(s, 6) == 1, "active low, nothing detected: %d", sim_value(s, 6));
    CHECK(cc_gpio_out_set(g, "cat", &err));
    CHECKF(sim_value(s, 6) == 0, "active low, cat detected: %d", sim_value(s, 6));
    CHECK(cc_gpio_out_set(g, "dog", &err));
    CHECKF(sim_value(s, 6) == 1, "active low, dog detected: %d", sim_value(s, 6));
    cc_gpio_out_destroy(g);
}

/* Two labels on one line (by offset and by path): requested once, high while either is
 * detected. */
static void test_shared_line(const struct sim *s)
{
    char cat[128], bird[128];
    snprintf(cat, sizeof(cat), "cat=%s:7", s->chip);
    snprintf(bird, sizeof(bird), "bird=/dev/%s:7", s->chip);
    const char *specs[] = {cat, bird};
    struct cc_error err = {""};
    struct cc_gpio_out *g = create(specs, 2, false, &err);
    if (!CHECKF(g, "a line for two labels: %s", err.msg))
        return;
    const char *seq[] = {"cat", "dog", "bird", NULL, "cat"};
    const int want[] = {1, 0, 1, 0, 1};
    for (int i = 0; i < 5; i++) {
        CHECK(cc_gpio_out_set(g, seq[i], &err));
        CHECKF(sim_value(s, 7) == want[i], "shared line, %s detected: %d", seq[i] ? seq[i] : "none",
               sim_value(s, 7));
    }
    cc_gpio_out_destroy(g);
    CHECKF(sim_value(s, 7) == 0, "shared line released: %d", sim_value(s, 7));
}

static void test_refusals(const struct sim *s)
{
    char beyond[128], unnamed[128];
    snprintf(beyond, sizeof(beyond), "cat=%s:8", s->chip);
    snprintf(unnamed, sizeof(unnamed), "cat=%s:door", s->chip);
    const struct {
        const char *spec, *want;
    } bad[] = {
        {beyond, "(" SIM_LABEL ") has lines 0 to 7; line 8 is not one of them"},
        {unnamed, "(" SIM_LABEL ") has no line named \"door\""},
        {"cat=gpiochip9:0", "no GPIO chip \"gpiochip9\""},
        {"cat=no-such-label:0", "no GPIO chip \"no-such-label\""},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct cc_error err = {""};
        const char *specs[] = {bad[i].spec};
        CHECKF(!create(specs, 1, false, &err), "%s accepted", bad[i].spec);
        CHECKF(strstr(err.msg, bad[i].want) && !strchr(err.msg, '\n'), "%s: \"%s\" lacks \"%s\"",
               bad[i].spec, err.msg, bad[i].want);
    }
    // Nothing stays requested after a refusal: the good first line is free again.
    char good[128];
    snprintf(good, sizeof(good), "cat=%s:2", s->chip);
    const char *two[] = {good, beyond};
    struct cc_error err = {""};
    CHECK(!create(two, 2, false, &err));
    struct cc_gpio_out *g = create(two, 1, false, &err);
    CHECKF(g, "line 2 after a refusal: %s", err.msg);
    cc_gpio_out_destroy(g);
}

int main(void)
{
    struct sim s;
    if (!make_sim(&s))
        return tu_exit_code();
    printf("test_gpio_vm: gpio-sim chip %s (%s), label " SIM_LABEL "\n", s.chip, s.dev);
    test_follow(&s);
    test_active_low(&s);
    test_shared_line(&s);
    test_refusals(&s);
    printf("test_gpio_vm: %s\n", tu_failures() ? "FAILED" : "ok");
    return tu_exit_code();
}
