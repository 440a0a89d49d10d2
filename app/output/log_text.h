/* camclass — the detection log's lines as text for people (--log-format text, the default when
 * the log is a terminal): one short line per JSON line, made from the same object, so the
 * two formats can never say different things.
 *
 *   14:02:11.512  #1005  tabby cat 0.91  tiger cat 0.04  Egyptian cat 0.02  41.8 ms
 *   14:02:11.900  detected  tabby cat 0.64 (onset)
 *   14:02:12.501  cleared   tabby cat after 0.6 s
 *   14:02:13.000  camera    covered: start
 *   14:03:11.502  stats     11 frames, 11.0 results/s, 17 dropped, latency 41.9 ms
 *
 * The time is the local wall-clock time of the write; the JSON line's "ts" is UTC. Labels are
 * printed as cleaned for JSON (valid UTF-8), control characters as '?'.
 */
#ifndef CC_LOG_TEXT_H
#define CC_LOG_TEXT_H

#include <cjson/cJSON.h>

/* The text line of a log object (without '\n'); malloc'd, NULL when out of memory. */
char *cc_log_text(const cJSON *o);

#endif
