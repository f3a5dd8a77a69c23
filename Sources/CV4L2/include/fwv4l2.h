// A thin C layer over libv4l2 for Swift: libv4l2's calls are variadic and the VIDIOC_* request numbers are macros,
// neither of which Swift can import. Nothing here holds state or decides anything.
#ifndef FACEWIRE_V4L2_H
#define FACEWIRE_V4L2_H

#include <linux/videodev2.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// ioctl request numbers.
extern const unsigned long FW_VIDIOC_QUERYCAP;
extern const unsigned long FW_VIDIOC_ENUM_FMT;
extern const unsigned long FW_VIDIOC_ENUM_FRAMESIZES;
extern const unsigned long FW_VIDIOC_ENUM_FRAMEINTERVALS;
extern const unsigned long FW_VIDIOC_G_FMT;
extern const unsigned long FW_VIDIOC_S_FMT;
extern const unsigned long FW_VIDIOC_G_PARM;
extern const unsigned long FW_VIDIOC_S_PARM;
extern const unsigned long FW_VIDIOC_REQBUFS;
extern const unsigned long FW_VIDIOC_QUERYBUF;
extern const unsigned long FW_VIDIOC_QBUF;
extern const unsigned long FW_VIDIOC_DQBUF;
extern const unsigned long FW_VIDIOC_STREAMON;
extern const unsigned long FW_VIDIOC_STREAMOFF;

/// libv4l2's calls (v4l2_open, v4l2_close, v4l2_ioctl, v4l2_mmap, v4l2_munmap); they set errno as the system calls do.
int fw_v4l2_open(const char *path, int flags);
int fw_v4l2_close(int fd);
int fw_v4l2_ioctl(int fd, unsigned long request, void *argument);
void *fw_v4l2_mmap(size_t length, int fd, int64_t offset);  // PROT_READ | PROT_WRITE, MAP_SHARED; NULL on failure
int fw_v4l2_munmap(void *start, size_t length);

/// Waits up to `timeout_ms` for a buffer: 1 ready, 0 timeout, -1 error (errno), -2 the device reported an error or
/// hung up (unplugged).
int fw_poll_readable(int fd, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif
