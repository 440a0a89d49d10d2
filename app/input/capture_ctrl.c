/* camclass — enumerating what a camera offers, --list-cameras, and V4L2 controls by name
 * (see capture.h). Everything here is called by the controlling thread. */
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <libv4l2.h>
#include <linux/videodev2.h>

#include "capture.h"
#include "capture_internal.h"

/* ---------------------------------------------------------------------------------------------
 * --list-cameras
 * ------------------------------------------------------------------------------------------- */

static int cmp_version(const void *a, const void *b)
{
    return strverscmp(*(char *const *)a, *(char *const *)b);
}

static void print_modes(FILE *out, const struct cc_mode *modes, int n)
{
    uint32_t last = 0;
    for (int i = 0; i < n; i++) {
        const struct cc_mode *m = &modes[i];
        if (i == 0 || m->fourcc != last) {
            char fcc[5];
            cc_fourcc_str(m->fourcc, fcc);
            fprintf(out, "  %s  %s%s\n", fcc, m->description,
                    m->pixfmt < 0 ? "  (not handled by camclass)" : "");
            last = m->fourcc;
        }
        fprintf(out, "      %s%dx%d:", m->stepwise_size ? "any size, e.g. " : "", m->width,
                m->height);
        if (m->stepwise_rates)
            fprintf(out, " %.4g to %.4g fps", m->fps[1], m->fps[0]);
        else
            for (int k = 0; k < m->n_fps; k++)
                fprintf(out, "%s %.4g", k ? "," : "", m->fps[k]);
        fprintf(out, "%s\n", m->n_fps ? (m->stepwise_rates ? "" : " fps") : " rate not listed");
    }
}

bool cc_capture_list(FILE *out, struct cc_error *err)
{
    glob_t g;
    if (glob("/dev/video*", 0, NULL, &g) != 0 || g.gl_pathc == 0) {
        globfree(&g);
        return cc_error_set(err, "no cameras: /dev/video* does not exist; plug a camera in (or "
                                 "load its driver) and try again");
    }
    qsort(g.gl_pathv, g.gl_pathc, sizeof(char *), cmp_version);
    int cameras = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *path = g.gl_pathv[i];
        struct v4l2_capability caps;
        struct cc_error e = {""};
        int fd = cc_v4l2_open(path, &caps, true, &e);
        if (fd < 0) {
            fprintf(out, "%s: %s\n", path, e.msg);
            continue;
        }
        cameras++;
        fprintf(out, "%s: %s (driver %s, %s)\n", path, (const char *)caps.card,
                (const char *)caps.driver, (const char *)caps.bus_info);
        struct cc_mode *modes;
        int n;
        if (cc_v4l2_enum_modes(fd, 640, 480, true, &modes, &n, &e)) {
            print_modes(out, modes, n);
            free(modes);
        } else {
            fprintf(out, "  %s\n", e.msg);
        }
        v4l2_close(fd);
    }
    globfree(&g);
    if (cameras == 0)
        return cc_error_set(err, "no usable camera among /dev/video* (see the reasons above)");
    return true;
}

/* ---------------------------------------------------------------------------------------------
 * Controls
 * ------------------------------------------------------------------------------------------- */

// "Test Pattern", "test_pattern" and "test-pattern" compare equal.
static bool same_name(const char *a, const char *b)
{
    for (;; a++, b++) {
        int x = isalnum((unsigned char)*a) ? tolower((unsigned char)*a) : (*a ? '_' : 0);
        int y = isalnum((unsigned char)*b) ? tolower((unsigned char)*b) : (*b ? '_' : 0);
        if (x != y)
            return false;
        if (!x)
            return true;
    }
}

static bool find_ctrl(int fd, const char *name, struct v4l2_queryctrl *q)
{
    memset(q, 0, sizeof(*q));
    q->id = V4L2_CTRL_FLAG_NEXT_CTRL;
    while (cc_v4l2_ioctl(fd, VIDIOC_QUERYCTRL, q) == 0) {
        if (!(q->flags & V4L2_CTRL_FLAG_DISABLED) && q->type != V4L2_CTRL_TYPE_CTRL_CLASS &&
            same_name((const char *)q->name, name))
            return true;
        q->id |= V4L2_CTRL_FLAG_NEXT_CTRL;
    }
    return false;
}

static const char *type_name(uint32_t t)
{
    switch (t) {
    case V4L2_CTRL_TYPE_INTEGER:
        return "int";
    case V4L2_CTRL_TYPE_BOOLEAN:
        return "bool";
    case V4L2_CTRL_TYPE_MENU:
        return "menu";
    case V4L2_CTRL_TYPE_INTEGER_MENU:
        return "intmenu";
    case V4L2_CTRL_TYPE_BUTTON:
        return "button";
    case V4L2_CTRL_TYPE_INTEGER64:
        return "int64";
    case V4L2_CTRL_TYPE_STRING:
        return "string";
    case V4L2_CTRL_TYPE_BITMASK:
        return "bitmask";
    default:
        return "other";
    }
}

// Parses value for control q into *v; menu items by name or index.
static bool parse_value(int fd, const struct v4l2_queryctrl *q, const char *value, int64_t *v,
                        struct cc_error *err)
{
    if (q->type == V4L2_CTRL_TYPE_BUTTON) {
        *v = 1;
        return true;
    }
    if (q->type == V4L2_CTRL_TYPE_BOOLEAN) {
        static const char *const yes[] = {"1", "on", "true", "yes"}, *const no[] = {"0", "off",
                                                                                    "false", "no"};
        for (int i = 0; i < 4; i++) {
            if (same_name(value, yes[i]))
                return *v = 1, true;
            if (same_name(value, no[i]))
                return *v = 0, true;
        }
        return cc_error_set(err, "control '%s' is on/off; '%s' is neither", (const char *)q->name,
                            value);
    }
    char *end;
    errno = 0;
    long long x = strtoll(value, &end, 0);
    if (*value && !*end && errno == 0) {
        // A bitmask's maximum is the mask of its bits (unsigned: 0x80000000 reads negative in
        // the int32 field); a bit outside it the driver refuses with ERANGE: said here.
        uint32_t mask = (uint32_t)q->maximum;
        if (q->type == V4L2_CTRL_TYPE_BITMASK && (x < 0 || x > UINT32_MAX || (x & ~(int64_t)mask)))
            return cc_error_set(err, "control '%s' takes the bits of 0x%" PRIx32 ", not %s",
                                (const char *)q->name, mask, value);
        // The driver clamps to its range, but a value past int32 would wrap first (2^32 + 1
        // set 1): said with the range.
        if (q->type != V4L2_CTRL_TYPE_INTEGER64 && q->type != V4L2_CTRL_TYPE_BITMASK &&
            (x < q->minimum || x > q->maximum))
            return cc_error_set(err, "control '%s' takes %lld to %lld, not %s",
                                (const char *)q->name, (long long)q->minimum, (long long)q->maximum,
                                value);
        *v = x;
        return true;
    }
    if (q->type == V4L2_CTRL_TYPE_MENU) {
        struct v4l2_querymenu m = {.id = q->id};
        for (int64_t i = q->minimum; i <= q->maximum; i++) {
            m.index = (uint32_t)i;
            if (cc_v4l2_ioctl(fd, VIDIOC_QUERYMENU, &m) == 0 &&
                same_name((const char *)m.name, value))
                return *v = i, true;
        }
        return cc_error_set(err, "control '%s' has no item '%s' (--list-controls shows them)",
                            (const char *)q->name, value);
    }
    return cc_error_set(err, "control '%s' wants a number, not '%s'", (const char *)q->name, value);
}

bool cc_capture_set_ctrl(struct cc_capture *cap, const char *name, const char *value,
                         struct cc_error *err)
{
    const char *dev = cc_capture_get_info(cap)->device;
    int fd = cc_capture_lock_fd(cap);
    bool ok = false;
    struct v4l2_queryctrl q;
    int64_t v = 0;
    if (fd < 0) {
        cc_error_set(err, "%s: cannot set '%s': the camera is lost (reopening)", dev, name);
    } else if (!find_ctrl(fd, name, &q)) {
        cc_error_set(err, "%s has no control '%s'; --list-controls shows the names", dev, name);
    } else if (q.type == V4L2_CTRL_TYPE_STRING ||
               (q.type > V4L2_CTRL_TYPE_BITMASK && q.type != V4L2_CTRL_TYPE_INTEGER_MENU)) {
        cc_error_set(err, "%s: control '%s' is of a type camclass cannot set", dev, name);
    } else if (parse_value(fd, &q, value ? value : "", &v, err)) {
        struct v4l2_ext_control c = {.id = q.id};
        if (q.type == V4L2_CTRL_TYPE_INTEGER64)
            c.value64 = v;
        else
            c.value = (int32_t)v;
        struct v4l2_ext_controls cs = {
            .which = V4L2_CTRL_WHICH_CUR_VAL, .count = 1, .controls = &c};
        if (cc_v4l2_ioctl(fd, VIDIOC_S_EXT_CTRLS, &cs) == 0) {
            ok = true;
        } else {
            int e = errno;
            if (e == ERANGE || e == EINVAL)
                cc_error_set(err, "%s: control '%s' = %" PRId64 " refused (%s); range %d..%d", dev,
                             (const char *)q.name, v, strerror(e), q.minimum, q.maximum);
            else if (e == EACCES)
                cc_error_set(err, "%s: control '%s' is read-only", dev, (const char *)q.name);
            else
                cc_error_set(err, "%s: setting control '%s' failed: %s%s", dev,
                             (const char *)q.name, strerror(e),
                             e == EBUSY ? "; it cannot change while streaming" : "");
        }
    }
    cc_capture_unlock_fd(cap);
    return ok;
}

/* Control q's current value into *v (64 bits wide: int64 controls too); false when it has
 * none to read (a button, a string, a compound control) or the driver says no. */
static bool read_value(int fd, const struct v4l2_query_ext_ctrl *q, int64_t *v)
{
    if (q->type == V4L2_CTRL_TYPE_BUTTON || q->type == V4L2_CTRL_TYPE_STRING ||
        (q->type > V4L2_CTRL_TYPE_BITMASK && q->type != V4L2_CTRL_TYPE_INTEGER_MENU) ||
        (q->flags & V4L2_CTRL_FLAG_WRITE_ONLY))
        return false;
    struct v4l2_ext_control c = {.id = q->id};
    struct v4l2_ext_controls cs = {.which = V4L2_CTRL_WHICH_CUR_VAL, .count = 1, .controls = &c};
    if (cc_v4l2_ioctl(fd, VIDIOC_G_EXT_CTRLS, &cs) != 0)
        return false;
    *v = q->type == V4L2_CTRL_TYPE_INTEGER64 ? c.value64 : (int64_t)c.value;
    return true;
}

/* One control's lines: name, type, range (a bitmask's mask in hex), the value, and a menu's
 * items by index (names; an integer menu's numbers), skipping those the driver leaves out. */
static void list_one(int fd, FILE *out, const struct v4l2_query_ext_ctrl *q)
{
    int64_t v = 0;
    bool has = read_value(fd, q, &v);
    fprintf(out, "  %-32s %-7s ", q->name, type_name(q->type));
    if (q->type == V4L2_CTRL_TYPE_BITMASK) // its maximum is the mask of its bits
        fprintf(out, "0x%" PRIx32, (uint32_t)q->maximum);
    else
        fprintf(out, "%lld..%lld", (long long)q->minimum, (long long)q->maximum);
    if (has && q->type == V4L2_CTRL_TYPE_BITMASK)
        fprintf(out, " = 0x%" PRIx32, (uint32_t)v);
    else if (has)
        fprintf(out, " = %" PRId64, v);
    fputc('\n', out);
    if (q->type != V4L2_CTRL_TYPE_MENU && q->type != V4L2_CTRL_TYPE_INTEGER_MENU)
        return;
    struct v4l2_querymenu m = {.id = q->id};
    for (int64_t i = q->minimum; i <= q->maximum && i <= UINT32_MAX; i++) {
        m.index = (uint32_t)i;
        if (cc_v4l2_ioctl(fd, VIDIOC_QUERYMENU, &m) != 0)
            continue;
        if (q->type == V4L2_CTRL_TYPE_MENU)
            fprintf(out, "      %" PRId64 ": %s\n", i, (const char *)m.name);
        else
            fprintf(out, "      %" PRId64 ": %lld\n", i, (long long)m.value);
    }
}

bool cc_capture_list_ctrls(struct cc_capture *cap, FILE *out, struct cc_error *err)
{
    const char *dev = cc_capture_get_info(cap)->device;
    int fd = cc_capture_lock_fd(cap);
    if (fd < 0) {
        cc_capture_unlock_fd(cap);
        return cc_error_set(err, "%s: the camera is lost (reopening)", dev);
    }
    // The extended query: 64-bit ranges (an int64 control's do not fit VIDIOC_QUERYCTRL's).
    struct v4l2_query_ext_ctrl q = {.id = V4L2_CTRL_FLAG_NEXT_CTRL};
    while (cc_v4l2_ioctl(fd, VIDIOC_QUERY_EXT_CTRL, &q) == 0) {
        if (q.type == V4L2_CTRL_TYPE_CTRL_CLASS)
            fprintf(out, "%s\n", q.name);
        else if (!(q.flags & V4L2_CTRL_FLAG_DISABLED))
            list_one(fd, out, &q);
        q.id |= V4L2_CTRL_FLAG_NEXT_CTRL;
    }
    cc_capture_unlock_fd(cap);
    return true;
}
