/* camclass — a setting that is one of a few words (common/env_word.h): the default when unset
 * or empty, each word's index, and one line naming the variable, the value and the words for
 * anything else (a word's case, a prefix, a word with more after it). */
#include <stdio.h>
#include <string.h>

#include "env_word.h"
#include "testutil.h"

static const char *const words[] = {"measure", "off", "on"};
static const struct cc_env_word spec = {"CAMCLASS_TEST", "a test mode",
                                        "measure (the default), off or on", words, 3};

static void test_words(void)
{
    static const struct {
        const char *value;
        int index;
    } good[] = {{NULL, 0}, {"", 0}, {"measure", 0}, {"off", 1}, {"on", 2}};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        struct cc_error err = {{0}};
        int index = -1;
        CHECKF(cc_env_word_parse(&spec, good[i].value, &index, &err) && index == good[i].index &&
                   !err.msg[0],
               "\"%s\": index %d (%s)", good[i].value ? good[i].value : "(unset)", index, err.msg);
    }
}

static void test_refused(void)
{
    static const char *const bad[] = {"ON", "o", "onn", "off ", " on", "measured", "1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct cc_error err = {{0}};
        int index = -1;
        char want[128];
        snprintf(want, sizeof(want),
                 "CAMCLASS_TEST=\"%s\" is not a test mode: use measure (the default), off or on",
                 bad[i]);
        CHECKF(!cc_env_word_parse(&spec, bad[i], &index, &err) && index == 0 &&
                   !strcmp(err.msg, want),
               "\"%s\": index %d, message \"%s\"", bad[i], index, err.msg);
    }
}

int main(void)
{
    test_words();
    test_refused();
    return tu_exit_code();
}
