/* The --gpio specs and the refusals that need no GPIO chip (app/output/gpio_out.c): every spec
 * split as documented (the last '=', then the last ':'), every bad one refused with one line
 * naming it and the form to use, a chip that is not there refused before anything is
 * requested. The lines themselves, against the kernel's gpio-sim: test_gpio_vm.c (suite
 * capture). */
#include <stdio.h>
#include <string.h>

#include "gpio_out.h"
#include "testutil.h"

static void test_good_specs(void)
{
    const struct {
        const char *spec, *label, *chip, *line;
    } good[] = {
        {"cat=gpiochip0:17", "cat", "gpiochip0", "17"},
        {"door open=/dev/gpiochip2:relay", "door open", "/dev/gpiochip2", "relay"},
        {"car=INT34C5:00:GPIO17", "car", "INT34C5:00", "GPIO17"}, // a chip label with a colon
        {"a=b=pinctrl-bcm2711:4", "a=b", "pinctrl-bcm2711", "4"}, // '=' in the label
        {"chat noir=0:0", "chat noir", "0", "0"},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        struct cc_gpio_spec s;
        struct cc_error err = {""};
        CHECKF(cc_gpio_out_parse(good[i].spec, &s, &err), "%s: %s", good[i].spec, err.msg);
        CHECKF(strcmp(s.label, good[i].label) == 0 && strcmp(s.chip, good[i].chip) == 0 &&
                   strcmp(s.line, good[i].line) == 0,
               "%s: label \"%s\" chip \"%s\" line \"%s\"", good[i].spec, s.label, s.chip, s.line);
    }
}

static void test_bad_specs(void)
{
    char long_label[400];
    memset(long_label, 'x', 300);
    snprintf(long_label + 300, sizeof(long_label) - 300, "=gpiochip0:1");
    const struct {
        const char *spec, *want;
    } bad[] = {
        {"cat", "--gpio \"cat\": no '=' after the label; give LABEL=CHIP:LINE, e.g. "
                "cat=gpiochip0:17"},
        {"gpiochip0:17", "no '=' after the label"},
        {"cat=gpiochip0", "--gpio \"cat=gpiochip0\": no ':' between the chip and the line; give "
                          "LABEL=CHIP:LINE"},
        {"cat:gpiochip0=17", "no ':' between the chip and the line"},
        {"=gpiochip0:17", "--gpio \"=gpiochip0:17\": no label before '='; give LABEL=CHIP:LINE"},
        {"cat=:17", "--gpio \"cat=:17\": no chip between '=' and ':'; give LABEL=CHIP:LINE"},
        {"cat=gpiochip0:", "--gpio \"cat=gpiochip0:\": no line after ':'; give LABEL=CHIP:LINE"},
        {long_label, "--gpio: the label is longer than 255 bytes"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct cc_gpio_spec s;
        struct cc_error err = {""};
        CHECKF(!cc_gpio_out_parse(bad[i].spec, &s, &err), "%.40s accepted", bad[i].spec);
        CHECKF(strstr(err.msg, bad[i].want) != NULL, "%.40s: \"%s\" lacks \"%s\"", bad[i].spec,
               err.msg, bad[i].want);
        CHECKF(!strchr(err.msg, '\n'), "%.40s: more than one line", bad[i].spec);
    }
}

/* Refusals of create that touch no line: the chip is not there (on any machine), a bad spec
 * after a good one (every spec is checked before a chip is opened), too few or too many. */
static void test_create_refusals(void)
{
    struct cc_error err = {""};
    const char *missing[] = {"cat=camclass-no-such-chip:3"};
    struct cc_gpio_out_config cfg = {.specs = missing, .n_specs = 1, .consumer = "camclass"};
    CHECK(!cc_gpio_out_create(&cfg, &err));
    CHECKF(strstr(err.msg, "--gpio cat=camclass-no-such-chip:3: no GPIO chip "
                           "\"camclass-no-such-chip\"") &&
               strstr(err.msg, "ls /dev/gpiochip*") && !strchr(err.msg, '\n'),
           "%s", err.msg);

    const char *second_bad[] = {"cat=camclass-no-such-chip:3", "dog"};
    cfg = (struct cc_gpio_out_config){.specs = second_bad, .n_specs = 2, .consumer = "camclass"};
    CHECK(!cc_gpio_out_create(&cfg, &err));
    CHECKF(strstr(err.msg, "--gpio \"dog\": no '='"), "%s", err.msg);

    const char *many[CC_GPIO_MAX_LINES + 1];
    for (int i = 0; i <= CC_GPIO_MAX_LINES; i++)
        many[i] = "cat=gpiochip0:1";
    for (int n = 0; n <= CC_GPIO_MAX_LINES + 1; n += CC_GPIO_MAX_LINES + 1) {
        cfg = (struct cc_gpio_out_config){.specs = many, .n_specs = n, .consumer = "camclass"};
        CHECK(!cc_gpio_out_create(&cfg, &err));
        CHECKF(strstr(err.msg, "--gpio: give 1 to 32 lines"), "%d: %s", n, err.msg);
    }
    cc_gpio_out_destroy(NULL);
}

/* A spec's label that the model does not have (camclass warns: its line would stay low). */
static void test_unknown_label(void)
{
    const char *labels[] = {"cat", "door open", "dog"};
    const char *known[] = {"cat=gpiochip0:17", "door open=gpiochip0:27"};
    const char *typo[] = {"cat=gpiochip0:17", "door_open=gpiochip0:27", "Dog=gpiochip0:22"};
    struct cc_gpio_spec scratch;
    CHECK(!cc_gpio_out_unknown_label(known, 2, labels, 3, &scratch));
    const char *u = cc_gpio_out_unknown_label(typo, 3, labels, 3, &scratch);
    CHECKF(u && strcmp(u, "door_open") == 0, "%s", u ? u : "(none)");
    u = cc_gpio_out_unknown_label(typo + 2, 1, labels, 3, &scratch); // labels are case-sensitive
    CHECKF(u && strcmp(u, "Dog") == 0, "%s", u ? u : "(none)");
    CHECK(!cc_gpio_out_unknown_label(typo, 3, labels, 0, &scratch)); // a model without labels
}

int main(void)
{
    test_good_specs();
    test_bad_specs();
    test_create_refusals();
    test_unknown_label();
    return tu_exit_code();
}
