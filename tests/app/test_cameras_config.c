/* camclass — unit tests of the config's "cameras" (app/cameras.c): cameras read in order with
 * their own keys, the top-level values filling what a camera leaves out (cc_cameras_view), the
 * command line's source replacing the config's cameras; every bad entry refused with one line
 * naming the camera and the key. The program's exit 2 for them: test_cameras.py's config part. */
#include <stdio.h>
#include <string.h>

#include "cameras.h"
#include "cli.h"
#include "testutil.h"

/* A config text applied to a fresh cli (after the command line argv, NULL-terminated, when
 * argv is given), then its cameras read. */
static bool read_text(struct cc_cli *cli, char **argv, const char *text, struct cc_cameras *c,
                      struct cc_error *err)
{
    cc_cli_init(cli);
    *err = (struct cc_error){0};
    int argc = 1;
    while (argv && argv[argc])
        argc++;
    if (argv && cc_cli_parse(cli, argc, argv, err) != CC_CLI_OK)
        return false;
    return cc_cli_apply_config_text(cli, text, "t.json", err) &&
           cc_cameras_read(cli, "t.json", c, err);
}

static void test_three_cameras(void)
{
    struct cc_cli cli, v;
    struct cc_cameras c;
    struct cc_error err;
    const char *text =
        "{\"fps\": 5, \"size\": \"640x480\", \"threshold\": 0.5, \"cameras\": ["
        "{\"name\": \"door\", \"camera\": \"0\", \"rotation\": 180, \"hflip\": true},"
        "{\"name\": \"yard-2\", \"input\": \"rtsp://h/s\", \"fps\": 2.5, "
        "\"size\": \"1280x720\", \"roi\": \"0,0,0.5,0.5\", \"threshold\": 0.8,"
        " \"log-mode\": \"every\", \"model\": \"other.ccm\"},"
        "{\"name\": \"clip\", \"input\": \"a.y4m\", \"loop\": true, \"vflip\": true,"
        " \"rotation\": 90}]}";
    CHECKF(read_text(&cli, NULL, text, &c, &err), "%s", err.msg);
    CHECK(c.n == 3 && c.from_config);
    if (c.n != 3)
        return;
    CHECK(strcmp(c.cam[0].name, "door") == 0 && strcmp(c.cam[1].name, "yard-2") == 0 &&
          strcmp(c.cam[2].name, "clip") == 0);
    cc_cameras_view(&c, 0, &cli, &v);
    CHECK(v.camera && strcmp(v.camera, "0") == 0 && !v.input);
    CHECK(v.rotation == 180 && v.hflip && !v.vflip && v.fps == 5 && v.width == 640);
    CHECK(v.threshold == 0.5 && !v.model && !v.roi_set && !v.loop);
    cc_cameras_view(&c, 1, &cli, &v);
    CHECK(!v.camera && v.input && strcmp(v.input, "rtsp://h/s") == 0);
    CHECK(v.fps == 2.5 && v.width == 1280 && v.height == 720 && v.threshold == 0.8);
    CHECK(v.roi_set && v.roi.kind != CC_ROI_NONE && v.rotation == 0);
    CHECK(v.log_mode && strcmp(v.log_mode, "every") == 0);
    CHECK(v.model && strcmp(v.model, "other.ccm") == 0);
    cc_cameras_view(&c, 2, &cli, &v);
    CHECK(v.input && strcmp(v.input, "a.y4m") == 0 && v.loop && v.vflip && v.rotation == 90);
    CHECK(v.fps == 5 && v.threshold == 0.5);
    cc_cameras_finish(&c);
    cc_cli_finish(&cli);
}

/* No "cameras", or a source on the command line: one camera, the command line's settings. */
static void test_one_camera(void)
{
    struct cc_cli cli, v;
    struct cc_cameras c;
    struct cc_error err;
    CHECKF(read_text(&cli, NULL, "{\"input\": \"x.png\", \"rotation\": 270}", &c, &err), "%s",
           err.msg);
    CHECK(c.n == 1 && !c.from_config && c.cam[0].name[0] == 0);
    cc_cameras_view(&c, 0, &cli, &v);
    CHECK(v.input && strcmp(v.input, "x.png") == 0 && v.rotation == 270);
    cc_cameras_finish(&c);
    cc_cli_finish(&cli);

    char *argv[] = {"camclass", "--input", "cmd.png", "--hflip", NULL};
    CHECKF(read_text(&cli, argv,
                     "{\"cameras\": [{\"name\": \"a\", \"input\": \"a.png\"},"
                     " {\"name\": \"b\", \"input\": \"b.png\"}]}",
                     &c, &err),
           "%s", err.msg);
    CHECK(c.n == 1 && !c.from_config);
    cc_cameras_view(&c, 0, &cli, &v);
    CHECK(v.input && strcmp(v.input, "cmd.png") == 0 && v.hflip);
    cc_cameras_finish(&c);
    cc_cli_finish(&cli);
}

static void test_bad(void)
{
    static const struct {
        const char *text;
        const char *says[3]; // each in the message
    } bad[] = {
        {"{\"cameras\": {}}", {"\"cameras\" takes an array"}},
        {"{\"cameras\": []}", {"\"cameras\" takes an array"}},
        {"{\"cameras\": [3]}", {"camera 1 is not an object"}},
        {"{\"cameras\": [{\"input\": \"a\"}]}", {"camera 1 has no \"name\""}},
        {"{\"cameras\": [{\"name\": 7, \"input\": \"a\"}]}",
         {"camera 1", "\"name\" takes a string"}},
        {"{\"cameras\": [{\"name\": \"a/b\", \"input\": \"a\"}]}", {"camera 1", "a/b", "'/'"}},
        {"{\"cameras\": [{\"name\": \"..\", \"input\": \"a\"}]}", {"camera 1", "folder above"}},
        {"{\"cameras\": [{\"name\": \".hid\", \"input\": \"a\"}]}",
         {"camera 1", "starts with '.'"}},
        {"{\"cameras\": [{\"name\": \"\", \"input\": \"a\"}]}", {"camera 1", "is empty"}},
        {"{\"cameras\": [{\"name\": \"a\", \"input\": \"a\"}, {\"name\": \"a\", \"input\": "
         "\"b\"}]}",
         {"camera 2", "\"a\" is given to two cameras"}},
        {"{\"cameras\": [{\"name\": \"a\", \"input\": \"a\"}, {\"name\": \"b\"}]}",
         {"camera \"b\"", "give one source"}},
        {"{\"cameras\": [{\"name\": \"a\", \"input\": \"a\", \"camera\": \"0\"}]}",
         {"camera \"a\"", "not both"}},
        {"{\"cameras\": [{\"name\": \"a\", \"input\": \"a\", \"speed\": 3}]}",
         {"camera \"a\": \"speed\"", "not a camera key"}},
        {"{\"cameras\": [{\"name\": \"a\", \"input\": \"a\", \"top-k\": 3}]}",
         {"camera \"a\": \"top-k\"", "not a camera key"}},
        {"{\"cameras\": [{\"name\": \"a\", \"input\": \"a\", \"fps\": \"5\"}]}",
         {"camera \"a\": \"fps\"", "takes a number"}},
        {"{\"cameras\": [{\"name\": \"a\", \"input\": \"a\", \"fps\": 0}]}",
         {"camera \"a\": \"fps\"", "0.1 to 1000"}},
        {"{\"cameras\": [{\"name\": \"a\", \"input\": \"a\", \"rotation\": 45}]}",
         {"camera \"a\": \"rotation\"", "90"}},
        {"{\"cameras\": [{\"name\": \"a\", \"input\": \"a\", \"hflip\": 1}]}",
         {"camera \"a\": \"hflip\"", "true or false"}},
        {"{\"cameras\": [{\"name\": \"a\", \"input\": \"a\", \"size\": \"big\"}]}",
         {"camera \"a\": \"size\"", "WIDTHxHEIGHT"}},
        {"{\"cameras\": [{\"name\": \"a\", \"input\": \"a\", \"roi\": \"2,2,1,1\"}]}",
         {"camera \"a\": \"roi\""}},
        {"{\"cameras\": [{\"name\": \"a\", \"input\": \"a\", \"log-mode\": \"some\"}]}",
         {"camera \"a\": \"log-mode\"", "every"}},
        {"{\"cameras\": [{\"name\": \"a\", \"input\": \"a\", \"threshold\": 2}]}",
         {"camera \"a\": \"threshold\""}},
        {"{\"input\": \"x\", \"cameras\": [{\"name\": \"a\", \"input\": \"a\"}]}",
         {"\"cameras\" gives each camera", "drop the top-level"}},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct cc_cli cli;
        struct cc_cameras c = {0};
        struct cc_error err;
        CHECKF(!read_text(&cli, NULL, bad[i].text, &c, &err), "accepted: %s", bad[i].text);
        CHECKF(!strchr(err.msg, '\n') && strstr(err.msg, "t.json"), "%s: %s", bad[i].text, err.msg);
        for (int k = 0; k < 3 && bad[i].says[k]; k++)
            CHECKF(strstr(err.msg, bad[i].says[k]) != NULL, "%s: \"%s\" not in: %s", bad[i].text,
                   bad[i].says[k], err.msg);
        CHECK(c.n == 0 && !c.cam); // nothing left to free on failure
        cc_cli_finish(&cli);
    }
    // 17 cameras: more than one process runs.
    char text[4096] = "{\"cameras\": [";
    for (int i = 0; i < CC_CAMERAS_MAX + 1; i++)
        snprintf(text + strlen(text), sizeof(text) - strlen(text),
                 "%s{\"name\": \"c%d\", \"input\": \"a\"}", i ? "," : "", i);
    strcat(text, "]}");
    struct cc_cli cli;
    struct cc_cameras c;
    struct cc_error err;
    CHECK(!read_text(&cli, NULL, text, &c, &err) && strstr(err.msg, "at most 16"));
    cc_cli_finish(&cli);
}

/* The events' receivers: a camera's own replace the top level's, the others inherit them. */
static void test_event_keys(void)
{
    struct cc_cli cli, v;
    struct cc_cameras c;
    struct cc_error err;
    const char *text =
        "{\"webhook\": \"http://h/all\", \"on-event\": \"/bin/true\", \"gpio\": [\"a=c:1\"],"
        " \"ha-binary\": \"a\", \"cameras\": ["
        "{\"name\": \"one\", \"input\": \"a.png\"},"
        "{\"name\": \"two\", \"input\": \"b.png\", \"webhook\": \"http://h/two\","
        " \"on-event\": \"/bin/false\", \"on-event-timeout\": 3, \"ha-binary\": \"x,y\","
        " \"gpio\": [\"x=c:2\", \"y=c:3\"], \"gpio-active-low\": true}]}";
    CHECKF(read_text(&cli, NULL, text, &c, &err), "%s", err.msg);
    CHECK(c.n == 2);
    if (c.n != 2)
        return;
    cc_cameras_view(&c, 0, &cli, &v);
    CHECK(strcmp(v.webhook, "http://h/all") == 0 && strcmp(v.on_event, "/bin/true") == 0);
    CHECK(v.gpio.count == 1 && strcmp(v.gpio.items[0], "a=c:1") == 0 && !v.gpio_active_low);
    CHECK(strcmp(v.ha_binary, "a") == 0 && v.on_event_timeout == cli.on_event_timeout);
    cc_cameras_view(&c, 1, &cli, &v);
    CHECK(strcmp(v.webhook, "http://h/two") == 0 && strcmp(v.on_event, "/bin/false") == 0);
    CHECK(v.gpio.count == 2 && strcmp(v.gpio.items[1], "y=c:3") == 0 && v.gpio_active_low);
    CHECK(strcmp(v.ha_binary, "x,y") == 0 && v.on_event_timeout == 3);
    cc_cameras_finish(&c);
    cc_cli_finish(&cli);
}

/* The three-camera example of docs/FLEET.md (systemd/config-cameras.json): read as camclass
 * would. */
static void test_example(const char *path)
{
    struct cc_cli cli;
    struct cc_cameras c;
    struct cc_error err = {0};
    cc_cli_init(&cli);
    CHECKF(cc_cli_load_config(&cli, path, &err) && cc_cameras_read(&cli, path, &c, &err), "%s",
           err.msg);
    CHECK(c.n == 3 && c.from_config && strcmp(c.cam[2].name, "back gate") == 0);
    cc_cameras_finish(&c);
    cc_cli_finish(&cli);
}

int main(int argc, char **argv)
{
    test_three_cameras();
    test_one_camera();
    test_bad();
    test_event_keys();
    if (argc > 1)
        test_example(argv[1]);
    return tu_exit_code();
}
