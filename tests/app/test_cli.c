/* camclass — unit tests of the command line and the JSON config (app/cli.c): every option
 * parses into its field, both `--name value` and `--name=value`; every bad value is refused with
 * a line that names the option; a config fills what the command line left out and never
 * overrides it. The program's exit status for these cases is checked by test_cli_exit.py. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "testutil.h"

/* Parses a NULL-terminated list of arguments into cli (initialised here). */
static enum cc_cli_status parse(struct cc_cli *cli, struct cc_error *err, ...)
{
    char *argv[64] = {"camclass"};
    int argc = 1;
    va_list ap;
    va_start(ap, err);
    const char *a;
    while ((a = va_arg(ap, const char *)) && argc < 63)
        argv[argc++] = (char *)a;
    va_end(ap);
    cc_cli_init(cli);
    *err = (struct cc_error){0};
    return cc_cli_parse(cli, argc, argv, err);
}

static void test_defaults(void)
{
    struct cc_cli c;
    struct cc_error err;
    CHECK(parse(&c, &err, NULL) == CC_CLI_OK);
    CHECK(!c.camera && !c.input && !c.model && !c.log && !c.config && !c.log_mode);
    CHECK(c.backend == CC_BACKEND_AUTO);
    CHECK(c.device == -1 && c.threads == 0 && c.width == 0 && c.height == 0 && c.fps == 0);
    CHECK(c.top_k == 5);
    CHECK(c.threshold < 0);
    CHECK(!c.headless && !c.profile && !c.selftest && !c.loop && !c.help && !c.version);
    CHECK(!c.list_devices && !c.list_cameras);
    CHECK(c.window_w == 0 && c.window_h == 0 && !c.fullscreen && !c.shot_dir);
    cc_cli_finish(&c);
}

static void test_every_flag(void)
{
    struct cc_cli c;
    struct cc_error err;
    CHECKF(parse(&c, &err, "--camera", "/dev/video3", "--loop", "--model", "m.ccm", "--backend",
                 "cpu", "--device", "2", "--threads", "3", "--size", "1280x720", "--fps", "15",
                 "--top-k", "7", "--threshold", "0.4", "--headless", "--log", "out.jsonl",
                 "--log-mode", "detections", "--config", "c.json", "--profile", "--selftest",
                 "--list-devices", "--list-cameras", "--help", "--version", "--window", "800x480",
                 "--fullscreen", "--screenshot-dir", "shots", "--vk-fault", "lost:3", "--output",
                 "out.mkv", NULL) == CC_CLI_OK,
           "%s", err.msg);
    CHECK(c.camera && strcmp(c.camera, "/dev/video3") == 0);
    CHECK(c.loop);
    CHECK(c.model && strcmp(c.model, "m.ccm") == 0);
    CHECK(c.backend == CC_BACKEND_CPU);
    CHECK(c.device == 2 && c.threads == 3);
    CHECK(c.width == 1280 && c.height == 720);
    CHECK(c.fps == 15);
    CHECK(c.top_k == 7);
    CHECK(c.threshold == 0.4);
    CHECK(c.headless && c.profile && c.selftest && c.list_devices && c.list_cameras && c.help &&
          c.version);
    CHECK(c.log && strcmp(c.log, "out.jsonl") == 0);
    CHECK(c.log_mode && strcmp(c.log_mode, "detections") == 0);
    CHECK(c.config && strcmp(c.config, "c.json") == 0);
    CHECK(c.window_w == 800 && c.window_h == 480 && c.fullscreen);
    CHECK(c.width == 1280 && c.height == 720); // --window does not touch --size
    CHECK(c.shot_dir && strcmp(c.shot_dir, "shots") == 0);
    CHECK(c.vk_fault && strcmp(c.vk_fault, "lost:3") == 0);
    CHECK(c.output && strcmp(c.output, "out.mkv") == 0);
    cc_cli_finish(&c);

    // --name=value, --input, -h, and a later value replacing an earlier one.
    CHECKF(parse(&c, &err, "--input=dir/", "--backend=vulkan", "--top-k=1", "--top-k", "16",
                 "--size=16x8192", "--log=-", "-h", NULL) == CC_CLI_OK,
           "%s", err.msg);
    CHECK(c.input && strcmp(c.input, "dir/") == 0);
    CHECK(c.backend == CC_BACKEND_VULKAN);
    CHECK(c.top_k == 16);
    CHECK(c.width == 16 && c.height == 8192);
    CHECK(c.log && strcmp(c.log, "-") == 0);
    CHECK(c.help);
    cc_cli_finish(&c);
}

/* Each bad command line: refused, with a message containing want. */
static void test_bad(void)
{
    static const struct {
        const char *args[4];
        const char *want;
    } cases[] = {
        {{"--bogus"}, "unknown option --bogus"},
        {{"--bogus=1"}, "unknown option --bogus"},
        {{"-x"}, "unexpected argument \"-x\""},
        {{"a.png", "b.mp4", "c"}, "unexpected argument \"c\": give at most an input and an output"},
        {{"--input", "a.png", "b.png"}, "\"b.png\": the input is given twice"},
        {{"a.png", "--input", "b.png"}, "--input is given twice"},
        {{"a.png", "x.mp4", "--output", "y.mp4"}, "--output is given twice"},
        {{"--frames", "0"}, "--frames takes a whole number from 1"},
        {{"--"}, "unexpected argument"},
        {{"--top-k"}, "--top-k needs a value"},
        {{"--top-k", "0"}, "--top-k takes a whole number from 1 to 16, not \"0\""},
        {{"--top-k", "17"}, "from 1 to 16"},
        {{"--top-k", "3x"}, "not \"3x\""},
        {{"--device", "-1"}, "--device takes a whole number from 0 to 1000"},
        {{"--threads", "0"}, "--threads takes a whole number from 1 to 16"},
        {{"--fps", "0"}, "--fps takes a number from 0.1 to 1000, not \"0\""},
        {{"--fps", "nan"}, "--fps takes a number"},
        {{"--threshold", "1.5"}, "--threshold takes a number from 0 to 1, not \"1.5\""},
        {{"--threshold", "-0.1"}, "--threshold takes a number from 0 to 1"},
        {{"--size", "640"}, "--size takes WIDTHxHEIGHT"},
        {{"--size", "640x"}, "--size takes WIDTHxHEIGHT"},
        {{"--size", "8x8"}, "16 to 8192"},
        {{"--size", "640x480x3"}, "not \"640x480x3\""},
        {{"--window", "800"}, "--window takes WIDTHxHEIGHT"},
        {{"--window", "9000x480"}, "16 to 8192"},
        {{"--window", "479x320"},
         "smallest size that shows the frame, the title and the results is 480x320"},
        {{"--screenshot-dir", ""}, "--screenshot-dir needs a non-empty value"},
        {{"--output", ""}, "--output needs a non-empty value"},
        {{"--backend", "opengl"}, "--backend takes auto, vulkan, cpu or ref, not \"opengl\""},
        // Checked at parse time: it was checked once the model, engine and camera were up, so
        // a typo with no camera there was exit 1 (retried by the service), not 2.
        {{"--log-mode", "detection"}, "--log-mode takes every or detections, not \"detection\""},
        {{"--model", ""}, "--model needs a non-empty value"},
        {{"--headless=yes"}, "--headless takes no value"},
        {{"--camera", "/dev/video0", "--input", "x"}, "--camera and --input exclude each other"},
        {{"--vk-fault", "lost"}, "--vk-fault: vk fault \"lost\": use alloc:N, oom:N or lost:N"},
        {{"--vk-fault", "oom:0"}, "vk fault \"oom:0\""},
        {{"--vk-fault", "melt:1"}, "vk fault \"melt:1\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *argv[6] = {"camclass"};
        int argc = 1;
        for (int k = 0; k < 4 && cases[i].args[k]; k++)
            argv[argc++] = (char *)cases[i].args[k];
        struct cc_cli c;
        struct cc_error err = {0};
        cc_cli_init(&c);
        CHECKF(cc_cli_parse(&c, argc, argv, &err) == CC_CLI_ERROR, "case %zu (%s) accepted", i,
               cases[i].args[0]);
        CHECKF(strstr(err.msg, cases[i].want) != NULL, "case %zu: \"%s\" lacks \"%s\"", i, err.msg,
               cases[i].want);
        CHECKF(!strchr(err.msg, '\n'), "case %zu: more than one line", i);
        cc_cli_finish(&c);
    }
}

static void test_positional(void)
{
    // camclass IN [OUT]: the input and the output as bare arguments; "-" is standard input.
    const char *argv[] = {"camclass", "photo.jpg", "--top-k", "2", "out.mp4"};
    struct cc_cli cli;
    struct cc_error err = {""};
    cc_cli_init(&cli);
    CHECKF(cc_cli_parse(&cli, 5, (char **)argv, &err) == CC_CLI_OK, "IN OUT: %s", err.msg);
    CHECK(cli.input && strcmp(cli.input, "photo.jpg") == 0);
    CHECK(cli.output && strcmp(cli.output, "out.mp4") == 0 && cli.top_k == 2);
    cc_cli_finish(&cli);
    const char *dash[] = {"camclass", "-", "--frames", "7"};
    cc_cli_init(&cli);
    CHECKF(cc_cli_parse(&cli, 4, (char **)dash, &err) == CC_CLI_OK, "-: %s", err.msg);
    CHECK(cli.input && strcmp(cli.input, "-") == 0 && cli.frames == 7);
    cc_cli_finish(&cli);
}

static void test_config(void)
{
    struct cc_cli c;
    struct cc_error err;
    // Every config key, nothing on the command line.
    const char *all =
        "{\"camera\": \"/dev/video1\", \"loop\": true, \"model\": \"a.ccm\","
        " \"backend\": \"cpu\", \"device\": 1, \"threads\": 2, \"size\": \"320x240\","
        " \"fps\": 12.5, \"top-k\": 3, \"threshold\": 0.25, \"headless\": true,"
        " \"log\": \"-\", \"log-mode\": \"every\", \"profile\": true,"
        " \"window\": \"480x320\", \"fullscreen\": true, \"screenshot-dir\": \"/tmp\","
        " \"output\": \"rec.mp4\"}";
    CHECK(parse(&c, &err, NULL) == CC_CLI_OK);
    CHECKF(cc_cli_apply_config_text(&c, all, "t.json", &err), "%s", err.msg);
    CHECK(c.camera && strcmp(c.camera, "/dev/video1") == 0);
    CHECK(c.loop && c.headless && c.profile);
    CHECK(c.model && strcmp(c.model, "a.ccm") == 0);
    CHECK(c.backend == CC_BACKEND_CPU && c.device == 1 && c.threads == 2);
    CHECK(c.width == 320 && c.height == 240 && c.fps == 12.5);
    CHECK(c.top_k == 3 && c.threshold == 0.25);
    CHECK(c.log && strcmp(c.log, "-") == 0);
    CHECK(c.log_mode && strcmp(c.log_mode, "every") == 0);
    CHECK(c.window_w == 480 && c.window_h == 320 && c.fullscreen);
    CHECK(c.shot_dir && strcmp(c.shot_dir, "/tmp") == 0);
    CHECK(c.output && strcmp(c.output, "rec.mp4") == 0);
    cc_cli_finish(&c);

    // The command line wins, option by option; the config fills the rest. A source on the
    // command line (input) replaces the config's camera.
    CHECK(parse(&c, &err, "--top-k", "9", "--backend", "vulkan", "--input", "x.y4m", NULL) ==
          CC_CLI_OK);
    CHECKF(cc_cli_apply_config_text(&c, all, "t.json", &err), "%s", err.msg);
    CHECK(c.top_k == 9);
    CHECK(c.backend == CC_BACKEND_VULKAN);
    CHECK(!c.camera && c.input && strcmp(c.input, "x.y4m") == 0);
    CHECK(c.threads == 2 && c.headless && c.threshold == 0.25); // from the config
    cc_cli_finish(&c);

    // A flag given on the command line is not turned off by "false" in the config.
    CHECK(parse(&c, &err, "--headless", NULL) == CC_CLI_OK);
    CHECK(cc_cli_apply_config_text(&c, "{\"headless\": false, \"loop\": false}", "t", &err));
    CHECK(c.headless && !c.loop);
    cc_cli_finish(&c);

    // The installed config of the systemd unit parses.
    CHECK(parse(&c, &err, NULL) == CC_CLI_OK);
    CHECKF(cc_cli_apply_config_text(&c,
                                    "{\"camera\": \"/dev/video0\", \"backend\": \"auto\","
                                    " \"headless\": true, \"log\": \"-\", \"log-mode\":"
                                    " \"detections\", \"top-k\": 5, \"threshold\": 0.5}",
                                    "config.json", &err),
           "%s", err.msg);
    cc_cli_finish(&c);

    static const struct {
        const char *text, *want;
    } bad[] = {
        {"{\"top-k\": 3,", "config t.json: not valid JSON"},
        {"[1, 2]", "must be a JSON object"},
        {"{\"top-k\": 2} this is not json", "config t.json: text after the JSON object (line 1)"},
        {"{\"top-k\": 2}\n{\"serve\": \"8080\"}", "text after the JSON object (line 2)"},
        {"{\"bogus\": 1}", "config t.json: unknown key \"bogus\""},
        {"{\"config\": \"x.json\"}", "unknown key \"config\""},
        {"{\"selftest\": true}", "unknown key \"selftest\""},
        {"{\"vk-fault\": \"lost:1\"}", "unknown key \"vk-fault\""},
        {"{\"top-k\": \"3\"}", "config t.json: \"top-k\" takes a number"},
        {"{\"top-k\": 99}", "\"top-k\" takes a whole number from 1 to 16, not \"99\""},
        {"{\"top-k\": 2.5}", "not \"2.5\""},
        {"{\"headless\": 1}", "\"headless\" takes true or false"},
        {"{\"camera\": 0}", "\"camera\" takes a string"},
        {"{\"backend\": \"gpu\"}", "\"backend\" takes auto, vulkan, cpu or ref"},
        {"{\"log-mode\": \"all\"}", "config t.json: \"log-mode\" takes every or detections"},
        {"{\"size\": \"big\"}", "\"size\" takes WIDTHxHEIGHT"},
        {"{\"window\": \"8x8\"}", "\"window\" takes WIDTHxHEIGHT"},
        {"{\"fullscreen\": \"yes\"}", "\"fullscreen\" takes true or false"},
        {"{\"camera\": \"/dev/video0\", \"input\": \"x\"}", "exclude each other"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK(parse(&c, &err, NULL) == CC_CLI_OK);
        CHECKF(!cc_cli_apply_config_text(&c, bad[i].text, "t.json", &err), "config %zu accepted",
               i);
        CHECKF(strstr(err.msg, bad[i].want) != NULL, "config %zu: \"%s\" lacks \"%s\"", i, err.msg,
               bad[i].want);
        cc_cli_finish(&c);
    }

    // A file that is not there.
    CHECK(parse(&c, &err, NULL) == CC_CLI_OK);
    CHECK(!cc_cli_load_config(&c, "/nonexistent/camclass.json", &err));
    CHECKF(strstr(err.msg, "cannot read config /nonexistent/camclass.json: No such file") != NULL,
           "%s", err.msg);
    cc_cli_finish(&c);
}

// --camera N: an index (all digits) is /dev/videoN; anything else is a path as given.
static void test_camera_path(void)
{
    static const struct {
        const char *arg, *path;
        bool index;
    } cases[] = {
        {"0", "/dev/video0", true},
        {"12", "/dev/video12", true},
        {"007", "/dev/video7", true},
        {"00", "/dev/video0", true},
        {"/dev/video0", "/dev/video0", false},
        {"/dev/v4l/by-id/usb-cam-video-index0", "/dev/v4l/by-id/usb-cam-video-index0", false},
        {"0x1", "0x1", false},
        {"-1", "-1", false},
        {" 1", " 1", false},
        {"video1", "video1", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char path[64];
        bool index = cc_cli_camera_path(cases[i].arg, path, sizeof(path));
        CHECKF(index == cases[i].index && strcmp(path, cases[i].path) == 0,
               "--camera \"%s\": \"%s\" (index %d), not \"%s\"", cases[i].arg, path, index,
               cases[i].path);
    }
    char small[8]; // a path longer than the buffer is cut, never overrun
    cc_cli_camera_path("123456789", small, sizeof(small));
    CHECK(strlen(small) == sizeof(small) - 1);
    // The option keeps what was given (messages name it); main resolves it.
    struct cc_cli c;
    struct cc_error err;
    CHECK(parse(&c, &err, "--camera", "2", NULL) == CC_CLI_OK && strcmp(c.camera, "2") == 0);
    cc_cli_finish(&c);
}

/* Writes text to path; false when it cannot. */
static bool write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    fputs(text, f);
    return fclose(f) == 0;
}

// The default screenshot directory: xdg-user-dir PICTURES, else ~/Pictures, else ".".
static void test_pictures_dir(void)
{
    char home[] = "/tmp/camclass-test-home-XXXXXX", sub[4200], cfg[4200], out[4200], want[4400];
    if (!CHECK(mkdtemp(home) != NULL))
        return;
    const char *why;
    // Nothing: the working directory, also with no HOME at all.
    why = cc_cli_pictures_dir(NULL, NULL, home, out, sizeof(out));
    CHECKF(strcmp(out, ".") == 0 && strcmp(why, "the working directory") == 0, "%s (%s)", out, why);
    why = cc_cli_pictures_dir(NULL, NULL, NULL, out, sizeof(out));
    CHECK(strcmp(out, ".") == 0);
    // ~/Pictures when it exists.
    snprintf(sub, sizeof(sub), "%s/Pictures", home);
    CHECK(mkdir(sub, 0700) == 0);
    why = cc_cli_pictures_dir(NULL, NULL, home, out, sizeof(out));
    CHECKF(strcmp(out, sub) == 0 && strcmp(why, "~/Pictures") == 0, "%s (%s)", out, why);
    // user-dirs.dirs in ~/.config, "$HOME/..." expanded; the last assignment wins.
    snprintf(cfg, sizeof(cfg), "%s/.config", home);
    CHECK(mkdir(cfg, 0700) == 0);
    snprintf(sub, sizeof(sub), "%s/Bilder", home);
    CHECK(mkdir(sub, 0700) == 0);
    snprintf(want, sizeof(want), "%s/user-dirs.dirs", cfg);
    CHECK(write_text(want,
                     "# written by xdg-user-dirs-update\nXDG_DESKTOP_DIR=\"$HOME/Desktop\"\n"
                     "XDG_PICTURES_DIR=\"$HOME/Fotos\"\nXDG_PICTURES_DIR=\"$HOME/Bilder\"\n"));
    why = cc_cli_pictures_dir(NULL, NULL, home, out, sizeof(out));
    CHECKF(strcmp(out, sub) == 0 && strcmp(why, "user-dirs.dirs") == 0, "%s (%s)", out, why);
    // $XDG_CONFIG_HOME is where user-dirs.dirs is looked for when set.
    why = cc_cli_pictures_dir(NULL, home, home, out, sizeof(out));
    snprintf(want, sizeof(want), "%s/Pictures", home);
    CHECKF(strcmp(out, want) == 0 && strcmp(why, "~/Pictures") == 0, "%s (%s)", out, why);
    // An entry of $HOME itself means disabled: ~/Pictures.
    snprintf(want, sizeof(want), "%s/user-dirs.dirs", cfg);
    CHECK(write_text(want, "XDG_PICTURES_DIR=\"$HOME/\"\n"));
    why = cc_cli_pictures_dir(NULL, NULL, home, out, sizeof(out));
    CHECKF(strcmp(why, "~/Pictures") == 0, "%s (%s)", out, why);
    // $XDG_PICTURES_DIR first, when it is a directory; a missing one is passed over.
    why = cc_cli_pictures_dir(sub, NULL, home, out, sizeof(out));
    CHECKF(strcmp(out, sub) == 0 && strcmp(why, "XDG_PICTURES_DIR") == 0, "%s (%s)", out, why);
    why = cc_cli_pictures_dir("/nonexistent/pics", NULL, home, out, sizeof(out));
    CHECKF(strcmp(why, "~/Pictures") == 0, "%s (%s)", out, why);

    unlink(want);
    rmdir(cfg);
    rmdir(sub);
    snprintf(sub, sizeof(sub), "%s/Pictures", home);
    rmdir(sub);
    rmdir(home);
}

/* --roi and the config's "roi": fractions, pixels, none; the bundle's when not given; a bad
 * value is one line naming the flag and the forms. */
static void test_roi(void)
{
    struct cc_cli c;
    struct cc_error err = {{0}};
    cc_cli_init(&c);
    CHECK(parse(&c, &err, NULL) == CC_CLI_OK && !c.roi_set);
    cc_cli_finish(&c);
    cc_cli_init(&c);
    CHECKF(parse(&c, &err, "--roi", "0.5,0.25,0.5,0.5", NULL) == CC_CLI_OK && c.roi_set &&
               c.roi.kind == CC_ROI_FRACTION && c.roi.x == 0.5 && c.roi.h == 0.5,
           "%s", err.msg);
    cc_cli_finish(&c);
    cc_cli_init(&c);
    CHECK(parse(&c, &err, "--roi=320,120,200,200px", NULL) == CC_CLI_OK && c.roi_set &&
          c.roi.kind == CC_ROI_PIXELS && c.roi.w == 200);
    cc_cli_finish(&c);
    cc_cli_init(&c);
    CHECK(parse(&c, &err, "--roi", "none", NULL) == CC_CLI_OK && c.roi_set &&
          c.roi.kind == CC_ROI_NONE);
    cc_cli_finish(&c);
    cc_cli_init(&c);
    CHECK(parse(&c, &err, "--roi", "0.5,0.25,0.6,0.5", NULL) == CC_CLI_ERROR &&
          strstr(err.msg, "--roi") && strstr(err.msg, "X,Y,W,H"));
    cc_cli_finish(&c);
    // The config: a string; the command line wins.
    cc_cli_init(&c);
    CHECKF(cc_cli_apply_config_text(&c, "{\"roi\": \"0,0,0.5,0.5\"}", "t", &err) && c.roi_set &&
               c.roi.kind == CC_ROI_FRACTION && c.roi.w == 0.5,
           "%s", err.msg);
    cc_cli_finish(&c);
    cc_cli_init(&c);
    CHECK(parse(&c, &err, "--roi", "none", NULL) == CC_CLI_OK &&
          cc_cli_apply_config_text(&c, "{\"roi\": \"0,0,0.5,0.5\"}", "t", &err) &&
          c.roi.kind == CC_ROI_NONE);
    cc_cli_finish(&c);
    cc_cli_init(&c);
    CHECK(!cc_cli_apply_config_text(&c, "{\"roi\": [0, 0, 1, 1]}", "t", &err) &&
          strstr(err.msg, "\"roi\" takes a string"));
    CHECK(!cc_cli_apply_config_text(&c, "{\"roi\": \"0,0,1\"}", "t", &err) &&
          strstr(err.msg, "\"roi\" takes X,Y,W,H"));
    cc_cli_finish(&c);
}

// --gpio: repeatable, in order; the config's "gpio" is an array of strings, replaced as a
// whole by the command line's.
static void test_gpio_list(void)
{
    struct cc_cli c;
    struct cc_error err;
    CHECKF(parse(&c, &err, "--gpio", "cat=gpiochip0:17", "--gpio=dog=gpiochip0:27",
                 "--gpio-active-low", NULL) == CC_CLI_OK,
           "%s", err.msg);
    CHECK(c.gpio.count == 2 && strcmp(c.gpio.items[0], "cat=gpiochip0:17") == 0 &&
          strcmp(c.gpio.items[1], "dog=gpiochip0:27") == 0 && c.gpio_active_low);
    CHECK(cc_cli_apply_config_text(&c, "{\"gpio\": [\"bird=gpiochip1:4\"]}", "t", &err));
    CHECK(c.gpio.count == 2 && strcmp(c.gpio.items[0], "cat=gpiochip0:17") == 0);
    cc_cli_finish(&c);
    CHECK(c.gpio.count == 0 && !c.gpio.items);

    CHECK(parse(&c, &err, NULL) == CC_CLI_OK);
    CHECKF(cc_cli_apply_config_text(&c,
                                    "{\"gpio\": [\"cat=gpiochip0:17\", \"dog=GPIO27:1\"],"
                                    " \"gpio-active-low\": true}",
                                    "t", &err),
           "%s", err.msg);
    CHECK(c.gpio.count == 2 && strcmp(c.gpio.items[1], "dog=GPIO27:1") == 0 && c.gpio_active_low);
    cc_cli_finish(&c);

    static const struct {
        const char *text, *want;
    } bad[] = {
        {"{\"gpio\": \"cat=gpiochip0:17\"}",
         "config t: \"gpio\" takes an array of strings ([\"cat=gpiochip0:17\"])"},
        {"{\"gpio\": [\"cat=gpiochip0:17\", 3]}", "\"gpio\" takes an array of strings"},
        {"{\"gpio\": [\"\"]}", "config t: \"gpio\" needs a non-empty value"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK(parse(&c, &err, NULL) == CC_CLI_OK);
        CHECKF(!cc_cli_apply_config_text(&c, bad[i].text, "t", &err) &&
                   strstr(err.msg, bad[i].want),
               "%s: \"%s\"", bad[i].text, err.msg);
        cc_cli_finish(&c);
    }
    // At most CC_CLI_LIST_MAX on the command line.
    char *argv[2 * CC_CLI_LIST_MAX + 3] = {"camclass"};
    for (int i = 0; i <= CC_CLI_LIST_MAX; i++) {
        argv[1 + 2 * i] = "--gpio";
        argv[2 + 2 * i] = "cat=gpiochip0:1";
    }
    cc_cli_init(&c);
    CHECK(cc_cli_parse(&c, 2 * CC_CLI_LIST_MAX + 3, argv, &err) == CC_CLI_ERROR &&
          strstr(err.msg, "--gpio is given more than 32 times"));
    cc_cli_finish(&c);
}

int main(void)
{
    test_defaults();
    test_every_flag();
    test_bad();
    test_positional();
    test_config();
    test_camera_path();
    test_pictures_dir();
    test_roi();
    test_gpio_list();
    return tu_exit_code();
}
