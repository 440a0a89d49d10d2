/* camclass — the in-guest tests of V4L2 controls by name (test_capture_ctrl.c), run by
 * test_capture.c's main in the same qemu boot, each by its name there. */
#ifndef CC_TEST_CAPTURE_CTRL_TESTS_H
#define CC_TEST_CAPTURE_CTRL_TESTS_H

void test_ctrl_set(void);    // every control type set by name, read back
void test_ctrl_errors(void); // bad names and values: one line each, value unchanged
void test_ctrl_list(void);   // --list-controls' lines

#endif
