/* camclass — V4L2 controls by name (app/input/capture_ctrl.c) on vivid, in the qemu guest with
 * test_capture.c (its main runs these; suite 'capture'). vivid has a control of every type:
 * int (Brightness, Integer 32 Bits), int64, bool, menu with skipped items (Menu: 1, 3, 4),
 * integer menu, button, string, bitmask, read-only; the listing shows int64 ranges and integer
 * menus' numbers. Each value set is read back through a second descriptor of
 * the device (VIDIOC_G_EXT_CTRLS), not through the module; each bad name or value must give one
 * line naming the control and the problem, and leave the value as it was.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/videodev2.h>

#include "capture.h"
#include "capture_ctrl_tests.h"
#include "testutil.h"

enum { POISON = 0xA5 };

/* The current value of the control named exactly name, read on a descriptor of our own;
 * false with a failed check when there is none. */
static bool read_ctrl(const char *name, int64_t *value)
{
    int fd = open("/dev/video0", O_RDWR);
    if (!CHECKF(fd >= 0, "open /dev/video0"))
        return false;
    struct v4l2_queryctrl q = {.id = V4L2_CTRL_FLAG_NEXT_CTRL};
    bool found = false;
    while (!found && ioctl(fd, VIDIOC_QUERYCTRL, &q) == 0) {
        found = strcmp((const char *)q.name, name) == 0;
        if (!found)
            q.id |= V4L2_CTRL_FLAG_NEXT_CTRL;
    }
    struct v4l2_ext_control c = {.id = q.id};
    struct v4l2_ext_controls cs = {.which = V4L2_CTRL_WHICH_CUR_VAL, .count = 1, .controls = &c};
    bool ok = CHECKF(found, "vivid has no control '%s'", name) &&
              CHECKF(ioctl(fd, VIDIOC_G_EXT_CTRLS, &cs) == 0, "reading '%s'", name);
    close(fd);
    if (ok)
        *value = q.type == V4L2_CTRL_TYPE_INTEGER64 ? c.value64 : (int64_t)(uint32_t)c.value;
    if (ok && q.type != V4L2_CTRL_TYPE_INTEGER64 && q.type != V4L2_CTRL_TYPE_BITMASK)
        *value = c.value; // signed
    return ok;
}

/* vivid keeps values across opens: what these tests change goes back to the driver's
 * defaults at their end, for the tests that run after them (colours, formats). */
static void restore_defaults(struct cc_capture *cap)
{
    static const char *const defaults[][2] = {
        {"Brightness", "128"},
        {"Hue", "0"},
        {"Integer 32 Bits", "0"},
        {"Integer 64 Bits", "0"},
        {"Boolean", "1"},
        {"Horizontal Flip", "0"},
        {"Menu", "3"},
        {"Integer Menu", "4"},
        {"Test Pattern", "0"},
        {"Bitmask", "0x80002000"},
    };
    for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
        struct cc_error err = {""};
        CHECKF(cc_capture_set_ctrl(cap, defaults[i][0], defaults[i][1], &err), "restoring %s: %s",
               defaults[i][0], err.msg);
    }
}

static struct cc_capture *open_camera(void)
{
    struct cc_capture_config c = cc_capture_config_default();
    c.format = CC_PIX_YUYV;
    c.width = 320;
    c.height = 180;
    c.log = stdout;
    struct cc_error err = {""};
    struct cc_capture *cap = cc_capture_open(&c, &err);
    CHECKF(cap != NULL, "open: %s", err.msg);
    return cap;
}

/* Sets name = value and checks that vivid's control `exact` then holds want. */
static void expect_set(struct cc_capture *cap, const char *name, const char *value,
                       const char *exact, int64_t want)
{
    struct cc_error err;
    memset(&err, POISON, sizeof(err));
    bool ok = cc_capture_set_ctrl(cap, name, value, &err);
    CHECKF(ok, "%s = %s: %.300s", name, value ? value : "(none)", err.msg);
    int64_t got = 0;
    if (ok && read_ctrl(exact, &got))
        CHECKF(got == want, "%s = %s: '%s' holds %" PRId64 ", want %" PRId64, name,
               value ? value : "(none)", exact, got, want);
}

/* Sets name = value, which must fail with exactly the line want, and leave `exact` as it was. */
static void expect_refused(struct cc_capture *cap, const char *name, const char *value,
                           const char *exact, const char *want)
{
    int64_t before = 0, after = 0;
    bool readable = read_ctrl(exact, &before);
    struct cc_error err;
    memset(&err, POISON, sizeof(err));
    bool ok = cc_capture_set_ctrl(cap, name, value, &err);
    bool line = memchr(err.msg, '\0', sizeof(err.msg)) != NULL;
    CHECKF(!ok && line && strcmp(err.msg, want) == 0, "%s = %s: %s, error \"%.300s\", want \"%s\"",
           name, value ? value : "(none)", ok ? "set" : "refused", line ? err.msg : "(no line)",
           want);
    if (readable && read_ctrl(exact, &after))
        CHECKF(after == before, "%s = %s refused, but '%s' went from %" PRId64 " to %" PRId64, name,
               value ? value : "(none)", exact, before, after);
}

void test_ctrl_set(void)
{
    struct cc_capture *cap = open_camera();
    if (!cap)
        return;
    // Names as v4l2-ctl and as the driver write them, any case; numbers in C's bases; booleans
    // in words; menus by item name (any spelling) or index: name, value, vivid's name, value.
    static const struct {
        const char *name, *value, *exact;
        int64_t want;
    } sets[] = {
        {"brightness", "200", "Brightness", 200},
        {"Brightness", "0x10", "Brightness", 16},
        {"HUE", "-128", "Hue", -128},
        {"integer_32_bits", "-2147483648", "Integer 32 Bits", INT32_MIN},
        {"Integer-64-Bits", "1099511627776", "Integer 64 Bits", 1099511627776LL},
        {"Integer 64 Bits", "-5", "Integer 64 Bits", -5},
        {"boolean", "off", "Boolean", 0},
        {"Boolean", "YES", "Boolean", 1},
        {"horizontal_flip", "true", "Horizontal Flip", 1},
        {"horizontal_flip", "0", "Horizontal Flip", 0},
        {"menu", "menu_item_4", "Menu", 4},
        {"Menu", "1", "Menu", 1},
        {"integer_menu", "6", "Integer Menu", 6}, // by index, as v4l2-ctl
        {"test-pattern", "100% white", "Test Pattern", 6},
        {"TEST PATTERN", "0", "Test Pattern", 0},
        {"Bitmask", "0x80000000", "Bitmask", 0x80000000},
        {"bitmask", "0x402010", "Bitmask", 0x402010},
    };
    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
        expect_set(cap, sets[i].name, sets[i].value, sets[i].exact, sets[i].want);
    // A button takes no value.
    struct cc_error err = {""};
    CHECKF(cc_capture_set_ctrl(cap, "Button", NULL, &err), "Button: %s", err.msg);
    // While streaming, too.
    struct cc_frame_slot *slot = cc_frame_slot_create(1, &err);
    if (CHECK(slot) && CHECKF(cc_capture_start(cap, slot, &err), "start: %s", err.msg)) {
        struct cc_frame *f = NULL;
        CHECK(cc_frame_slot_take(slot, 5000, &f, &err) == CC_SLOT_FRAME);
        cc_frame_slot_release(slot, f);
        expect_set(cap, "brightness", "77", "Brightness", 77);
        cc_capture_stop(cap);
    }
    restore_defaults(cap);
    cc_capture_destroy(cap);
    cc_frame_slot_destroy(slot);
}

void test_ctrl_errors(void)
{
    struct cc_capture *cap = open_camera();
    if (!cap)
        return;
    // name, value, the control that must keep its value, the one line wanted.
    static const char *const refusals[][4] = {
        {"no_such_control", "1", "Brightness",
         "/dev/video0 has no control 'no_such_control'; --list-controls shows the names"},
        {"User Controls", "1", "Brightness", // a class, not a control
         "/dev/video0 has no control 'User Controls'; --list-controls shows the names"},
        {"brightness", "256", "Brightness", "control 'Brightness' takes 0 to 255, not 256"},
        {"brightness", "-1", "Brightness", "control 'Brightness' takes 0 to 255, not -1"},
        {"brightness", "bright", "Brightness", "control 'Brightness' wants a number, not 'bright'"},
        {"brightness", "12abc", "Brightness", "control 'Brightness' wants a number, not '12abc'"},
        {"brightness", NULL, "Brightness", "control 'Brightness' wants a number, not ''"},
        {"Integer 32 Bits", "4294967296", "Integer 32 Bits",
         "control 'Integer 32 Bits' takes -2147483648 to 2147483647, not 4294967296"},
        {"Integer 64 Bits", "99999999999999999999", "Integer 64 Bits",
         "control 'Integer 64 Bits' wants a number, not '99999999999999999999'"},
        {"Boolean", "maybe", "Boolean", "control 'Boolean' is on/off; 'maybe' is neither"},
        {"Menu", "Menu Item 2", "Menu",
         "control 'Menu' has no item 'Menu Item 2' (--list-controls shows them)"},
        {"Menu", "2", "Menu", // skipped by the driver
         "/dev/video0: control 'Menu' = 2 refused (Invalid argument); range 1..4"},
        {"Bitmask", "0x1", "Bitmask", "control 'Bitmask' takes the bits of 0x80402010, not 0x1"},
        {"String", "abc", "Brightness",
         "/dev/video0: control 'String' is of a type camclass cannot set"},
        {"Read-Only Integer 32 Bits", "5", "Read-Only Integer 32 Bits",
         "/dev/video0: control 'Read-Only Integer 32 Bits' is read-only"},
    };
    for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
        expect_refused(cap, refusals[i][0], refusals[i][1], refusals[i][2], refusals[i][3]);
    restore_defaults(cap);
    cc_capture_destroy(cap);
}

/* Checks that text has a line that is exactly want. */
static void expect_listed(const char *text, const char *want)
{
    size_t n = strlen(want);
    const char *p = text;
    while (p && (p = strstr(p, want)) && !((p == text || p[-1] == '\n') && p[n] == '\n'))
        p += n;
    CHECKF(p != NULL, "--list-controls has no line \"%s\"", want);
}

void test_ctrl_list(void)
{
    struct cc_capture *cap = open_camera();
    if (!cap)
        return;
    struct cc_error err = {""};
    CHECKF(cc_capture_set_ctrl(cap, "brightness", "77", &err), "%s", err.msg);
    CHECKF(cc_capture_set_ctrl(cap, "bitmask", "0x80000000", &err), "%s", err.msg);
    CHECKF(cc_capture_set_ctrl(cap, "hue", "-5", &err), "%s", err.msg);
    CHECKF(cc_capture_set_ctrl(cap, "menu", "1", &err), "%s", err.msg);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    bool ok = out && cc_capture_list_ctrls(cap, out, &err);
    if (out)
        fclose(out);
    if (CHECKF(ok && text, "list: %s", err.msg)) {
        expect_listed(text, "User Controls");
        expect_listed(text, "  Brightness                       int     0..255 = 77");
        expect_listed(text, "  Hue                              int     -128..128 = -5");
        expect_listed(text, "  Button                           button  0..0");
        expect_listed(text, "  Menu                             menu    1..4 = 1");
        expect_listed(text, "      1: Menu Item 1");
        expect_listed(text, "      3: Menu Item 3");
        CHECKF(!strstr(text, "Menu Item 2"), "a skipped menu item is listed");
        expect_listed(text, "  Bitmask                          bitmask 0x80402010 = 0x80000000");
        // 64-bit ranges and values (VIDIOC_QUERYCTRL's 32-bit fields said 0..0 here).
        expect_listed(text, "  Integer 64 Bits                  int64   "
                            "-9223372036854775808..9223372036854775807 = 0");
        // An integer menu's value and items (their numbers; vivid's skips index 1): it had none.
        expect_listed(text, "  Integer Menu                     intmenu 1..8 = 4");
        expect_listed(text, "      4: 5");
        expect_listed(text, "      8: 42");
        CHECKF(!strstr(text, "      1: 1\n"), "a skipped integer menu item is listed");
        expect_listed(text, "Vivid Controls");
        expect_listed(text, "      6: 100% White");
    }
    free(text);
    restore_defaults(cap);
    cc_capture_destroy(cap);
}
