/* camclass — a setting from the environment that is one of a few words.
 *
 * The CPU backend's switches (CAMCLASS_CPU_FUSED=measure|off|on, CAMCLASS_CPU_POOL=auto|always,
 * ...) each take one of a few words, the first of them the default. One parser for them all, so
 * that every switch reads and refuses a value the same way: unset or empty is the default; any
 * other word not in the list is one line naming the variable, the value and the words to use.
 */
#ifndef CC_ENV_WORD_H
#define CC_ENV_WORD_H

#include "error.h"

struct cc_env_word {
    const char *var;          // the variable's name, e.g. "CAMCLASS_CPU_FUSED"
    const char *what;         // what a value is, with its article: "a fused-block mode"
    const char *use;          // the words to use, as the message says them after "use "
    const char *const *words; // the words; words[0] is the default
    int n_words;
};

/* value's index in spec->words: 0 (the default) when value is NULL or ""; else (a word not in
 * the list) false with `VAR="value" is not WHAT: use USE` in err, and *index 0. */
bool cc_env_word_parse(const struct cc_env_word *spec, const char *value, int *index,
                       struct cc_error *err);

#endif
