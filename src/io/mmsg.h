/*
 * mmsg: the receive side of a recvmmsg batch, shared by the UDP and the
 * AF_PACKET back ends -- n messages, message i on buffer i (`size` bytes,
 * one iovec) with peer address slot i (`addr_len` bytes).  The arrays
 * belong to the caller.  Header-only; libc only.
 */
#ifndef INART_MMSG_H
#define INART_MMSG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* Point msg[0..n) at their buffers (buf: n * size bytes), iovecs and
 * address slots (addr: n * addr_len bytes). */
static inline void inart_mmsg_rx_init(struct mmsghdr *msg, struct iovec *iov, uint8_t *buf,
				      size_t size, void *addr, socklen_t addr_len, int n)
{
	for (int i = 0; i < n; i++) {
		iov[i].iov_base = buf + (size_t)i * size;
		iov[i].iov_len = size;
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
		msg[i].msg_hdr.msg_name = (uint8_t *)addr + (size_t)i * addr_len;
		msg[i].msg_hdr.msg_namelen = addr_len;
	}
}

/* Before each recvmmsg into msg[0..n): the address lengths and flags that
 * the previous call overwrote. */
static inline void inart_mmsg_rx_rearm(struct mmsghdr *msg, socklen_t addr_len, int n)
{
	for (int i = 0; i < n; i++) {
		msg[i].msg_hdr.msg_namelen = addr_len;
		msg[i].msg_hdr.msg_flags = 0;
	}
}

#endif
