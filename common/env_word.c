/* camclass — a setting from the environment that is one of a few words (see env_word.h). */
#include <string.h>

#include "env_word.h"

bool cc_env_word_parse(const struct cc_env_word *spec, const char *value, int *index,
                       struct cc_error *err)
{
    *index = 0;
    if (!value || !value[0])
        return true;
    for (int i = 0; i < spec->n_words; i++)
        if (!strcmp(value, spec->words[i])) {
            *index = i;
            return true;
        }
    return cc_error_set(err, "%s=\"%s\" is not %s: use %s", spec->var, value, spec->what,
                        spec->use);
}
