/* camclass — what capture.c gives capture_ctrl.c; not for other modules. */
#ifndef CC_CAPTURE_INTERNAL_H
#define CC_CAPTURE_INTERNAL_H

#include "capture.h"
#include "v4l2_device.h"

/* The capture's fd, locked against a reopen; -1 while the camera is lost. Unlock after use. */
int cc_capture_lock_fd(struct cc_capture *cap);
void cc_capture_unlock_fd(struct cc_capture *cap);

#endif
