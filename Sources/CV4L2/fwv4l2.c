#include "fwv4l2.h"

#include <errno.h>
#include <fcntl.h>
#include <libv4l2.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

const unsigned long FW_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
const unsigned long FW_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
const unsigned long FW_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
const unsigned long FW_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
const unsigned long FW_VIDIOC_G_FMT = VIDIOC_G_FMT;
const unsigned long FW_VIDIOC_S_FMT = VIDIOC_S_FMT;
const unsigned long FW_VIDIOC_G_PARM = VIDIOC_G_PARM;
const unsigned long FW_VIDIOC_S_PARM = VIDIOC_S_PARM;
const unsigned long FW_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
const unsigned long FW_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
const unsigned long FW_VIDIOC_QBUF = VIDIOC_QBUF;
const unsigned long FW_VIDIOC_DQBUF = VIDIOC_DQBUF;
const unsigned long FW_VIDIOC_STREAMON = VIDIOC_STREAMON;
const unsigned long FW_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;

int fw_v4l2_open(const char *path, int flags) { return v4l2_open(path, flags); }

int fw_v4l2_close(int fd) { return v4l2_close(fd); }

int fw_v4l2_ioctl(int fd, unsigned long request, void *argument) {
    int result;
    do {
        result = v4l2_ioctl(fd, request, argument);
    } while (result == -1 && errno == EINTR);
    return result;
}

void *fw_v4l2_mmap(size_t length, int fd, int64_t offset) {
    void *p = v4l2_mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset);
    return p == MAP_FAILED ? NULL : p;
}

int fw_v4l2_munmap(void *start, size_t length) { return v4l2_munmap(start, length); }

int fw_poll_readable(int fd, int timeout_ms) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int result;
    do {
        result = poll(&p, 1, timeout_ms);
    } while (result == -1 && errno == EINTR);
    if (result < 0) return -1;
    if (result == 0) return 0;
    if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) return -2;
    return 1;
}
