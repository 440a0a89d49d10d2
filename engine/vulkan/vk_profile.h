/* camclass — named Vulkan device profiles (internal to engine/).
 *
 * A profile is the limits and features of a device camclass is meant to run on but that the
 * machine in hand may not be (the Raspberry Pi 4's v3dv), applied to the device in hand: every
 * limit the engine depends on is clamped to the smaller of the two (the larger for alignments),
 * features the profile lacks are turned off, and the subgroup size becomes the profile's. The
 * engine then builds exactly what it would build on that device, on any conformant driver
 * (lavapipe in CI): a kernel or a tensor that would not fit the Pi fails the tests here, not
 * on a user's Pi. It simulates limits, not speed or precision.
 *
 * The values and where they come from are in docs/PLATFORMS.md.
 */
#ifndef CC_VK_PROFILE_H
#define CC_VK_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "vk_context.h"

/* Applies the profile named `name` to vk (after cc_vk_create chose the device, before anything
 * reads its limits); NULL or "" = none. False with err set for an unknown name (naming the
 * known ones). */
bool cc_vk_profile_apply(struct cc_vk *vk, const char *name, struct cc_error *err);

/* Whether name is a profile; *known: the known names, comma-separated, for messages (engine.h's
 * cc_engine_vk_profile_known). */
bool cc_vk_profile_known(const char *name, const char **known);

#endif
