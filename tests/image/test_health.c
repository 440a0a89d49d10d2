/* Camera health checks (app/image/health.c) on crafted pictures: a textured scene with sensor
 * noise, then that scene black, blurred, frozen and shifted, each for longer and for shorter
 * than the hold time. A normal clip must give no event at all; each fault exactly its own. */
#include <stdio.h>
#include <string.h>

#include "health.h"
#include "testutil.h"

#define W 224
#define H 224
#define FRAME_NS 100000000LL // 10 frames/s

enum look { NORMAL, BLACK, BLURRED, SHIFTED };

struct scene {
    uint8_t base[H][W];  // the scene: 8x8-pixel blocks of random grey
    uint8_t frame[H][W]; // the last picture made
    struct tu_rng rng;
    int64_t t;
};

static void scene_init(struct scene *s)
{
    tu_rng_seed(&s->rng, 7);
    uint8_t block[H / 8][W / 8];
    for (int y = 0; y < H / 8; y++)
        for (int x = 0; x < W / 8; x++)
            block[y][x] = (uint8_t)tu_rng_range(&s->rng, 40, 215);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            s->base[y][x] = block[y / 8][x / 8];
}

static uint8_t clamp(int v)
{
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

// A 7x7 box blur of the scene at (y, x).
static int blurred_at(const struct scene *s, int y, int x)
{
    int sum = 0, n = 0;
    for (int dy = -3; dy <= 3; dy++)
        for (int dx = -3; dx <= 3; dx++) {
            int yy = y + dy, xx = x + dx;
            if (yy >= 0 && yy < H && xx >= 0 && xx < W) {
                sum += s->base[yy][xx];
                n++;
            }
        }
    return sum / n;
}

// Makes the next picture of the given look, with +-2 of sensor noise.
static void make(struct scene *s, enum look look)
{
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int v = look == BLACK     ? 4
                    : look == BLURRED ? blurred_at(s, y, x)
                    : look == SHIFTED ? s->base[y][(x + W / 4) % W]
                                      : s->base[y][x];
            s->frame[y][x] = clamp(v + tu_rng_range(&s->rng, -2, 2));
        }
}

struct tally {
    int started[CC_HEALTH_COUNT], ended[CC_HEALTH_COUNT];
};

// Feeds n pictures of one look (fresh == false: the last picture again, as a frozen driver).
static void feed(struct cc_health *h, struct scene *s, enum look look, bool fresh, int n,
                 struct tally *tl)
{
    for (int i = 0; i < n; i++) {
        if (fresh || s->t == 0)
            make(s, look);
        struct cc_health_event ev[CC_HEALTH_COUNT];
        int k = cc_health_update(h, &s->frame[0][0], W, H, W, s->t, ev, NULL);
        for (int j = 0; j < k; j++) {
            if (ev[j].active)
                tl->started[ev[j].kind]++;
            else
                tl->ended[ev[j].kind]++;
            CHECKF(ev[j].since_ns <= s->t, "an event's start lies in the future");
        }
        s->t += FRAME_NS;
    }
}

// Checks that exactly the kinds in mask started (and, with ended, ended) once each.
static void expect(const struct tally *tl, unsigned mask, bool ended, const char *what)
{
    for (int k = 0; k < CC_HEALTH_COUNT; k++) {
        int want = (mask >> k) & 1;
        CHECKF(tl->started[k] == want, "%s: %s started %d times, want %d", what,
               cc_health_kind_name(k), tl->started[k], want);
        CHECKF(tl->ended[k] == (ended ? want : 0), "%s: %s ended %d times", what,
               cc_health_kind_name(k), tl->ended[k]);
    }
}

#define BIT(k) (1u << (k))

// One fault of `look` held for `seconds`, then the normal scene for 4 s.
static void episode(struct cc_health *h, struct scene *s, enum look look, bool fresh,
                    double seconds, unsigned mask, const char *what)
{
    struct tally tl = {0};
    feed(h, s, look, fresh, (int)(seconds * 10), &tl);
    for (int k = 0; k < CC_HEALTH_COUNT; k++)
        CHECKF(cc_health_active(h, k) == (((mask >> k) & 1) != 0), "%s: %s active is wrong", what,
               cc_health_kind_name(k));
    feed(h, s, NORMAL, true, 40, &tl);
    expect(&tl, mask, true, what);
}

static void test_episodes(void)
{
    struct cc_health_config cfg = cc_health_defaults();
    struct cc_error err = {""};
    struct cc_health *h = cc_health_create(&cfg, &err);
    if (!CHECKF(h != NULL, "create: %s", err.msg))
        return;
    struct scene s = {0};
    scene_init(&s);
    struct tally tl = {0};
    feed(h, &s, NORMAL, true, 100, &tl);
    expect(&tl, 0, false, "10 s of a normal scene");

    episode(h, &s, BLACK, true, 1.0, 0, "1 s of black (a passing shadow)");
    episode(h, &s, BLACK, true, 3.0, BIT(CC_HEALTH_COVERED) | BIT(CC_HEALTH_DARK), "3 s black");
    episode(h, &s, BLURRED, true, 1.0, 0, "1 s blurred");
    episode(h, &s, BLURRED, true, 3.0, BIT(CC_HEALTH_BLURRED), "3 s blurred");
    episode(h, &s, NORMAL, false, 1.0, 0, "1 s frozen");
    episode(h, &s, NORMAL, false, 3.0, BIT(CC_HEALTH_FROZEN), "3 s frozen");
    episode(h, &s, SHIFTED, true, 1.0, 0, "1 s turned");
    episode(h, &s, SHIFTED, true, 3.0, BIT(CC_HEALTH_MOVED), "3 s turned");

    // A new reference taken on the turned scene: it is then the healthy one.
    cc_health_reset_reference(h);
    struct tally t2 = {0};
    feed(h, &s, SHIFTED, true, 60, &t2);
    expect(&t2, 0, false, "the turned scene after a new reference");
    CHECK(!cc_health_active(h, CC_HEALTH_MOVED));
    struct tally t3 = {0};
    feed(h, &s, NORMAL, true, 30, &t3);
    expect(&t3, BIT(CC_HEALTH_MOVED), false, "the first scene against the new reference");
    cc_health_destroy(h);
}

static void test_same_frame_twice(void)
{
    // A frame delivered twice with the same timestamp (a reader that polled twice) is not frozen.
    struct cc_health_config cfg = cc_health_defaults();
    struct cc_health *h = cc_health_create(&cfg, NULL);
    struct scene s = {0};
    scene_init(&s);
    make(&s, NORMAL);
    struct cc_health_event ev[CC_HEALTH_COUNT];
    struct cc_health_stats st;
    int n = 0;
    for (int i = 0; i < 100; i++)
        n += cc_health_update(h, &s.frame[0][0], W, H, W, 0, ev, &st);
    CHECK(st.identical);
    CHECKF(n == 0 && !cc_health_active(h, CC_HEALTH_FROZEN), "one timestamp: %d events", n);
    cc_health_destroy(h);
}

static void test_bad_config(void)
{
    struct cc_health_config cfg = cc_health_defaults();
    cfg.blur_ratio = 1.5;
    struct cc_error err = {""};
    CHECK(cc_health_create(&cfg, &err) == NULL);
    CHECKF(strstr(err.msg, "out of range") != NULL, "message: %s", err.msg);
}

static void test_luma_from_tensor(void)
{
    // ImageNet normalisation of the RGB colours (255, 0, 0), (0, 255, 0), (0, 0, 255), grey 128.
    const float mean[3] = {0.485f, 0.456f, 0.406f}, sd[3] = {0.229f, 0.224f, 0.225f};
    const int rgb[4][3] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {128, 128, 128}};
    const int want[4] = {76, 150, 29, 128};
    for (int bgr = 0; bgr < 2; bgr++) {
        float chw[3 * 4];
        for (int i = 0; i < 4; i++)
            for (int c = 0; c < 3; c++) {
                int src = bgr ? 2 - c : c; // the model's channel c holds this colour component
                chw[c * 4 + i] = ((float)rgb[i][src] / 255.0f - mean[c]) / sd[c];
            }
        uint8_t luma[4];
        cc_health_luma_from_tensor(chw, 4, 1, mean, sd, bgr, luma);
        for (int i = 0; i < 4; i++)
            CHECKF(luma[i] >= want[i] - 1 && luma[i] <= want[i] + 1, "bgr %d colour %d: %d not %d",
                   bgr, i, luma[i], want[i]);
    }
}

int main(void)
{
    test_episodes();
    test_same_frame_twice();
    test_bad_config();
    test_luma_from_tensor();
    return tu_exit_code();
}
