/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-proto.c: the root helper's reading of a message from a front (daemon/proto.c:
 * dproto_recv). The agent-facing front runs unprivileged and reads the agent's HTTP; were
 * it taken over, what it sends the helper is hostile: any bytes, any number of descriptors.
 * Layout of an input: byte 0 says how many descriptors go with the message (0 to 4); the
 * rest is the message, sent as one datagram on a SOCK_SEQPACKET pair as the fronts do.
 * Checked beyond memory safety: an accepted message is exactly header + body and comes with
 * one descriptor; a refused one leaves no descriptor open.
 */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sb/error.h"

#include "../../daemon/daemon.h"
#include "fuzz.h"

static int sp[2] = { -1, -1 };
static int lowest_free = -1;

static int
probe_lowest_free(void)
{
	int fd = fcntl(2, F_DUPFD_CLOEXEC, 0);

	if (fd >= 0)
		close(fd);
	return fd;
}

static void
send_message(const uint8_t *msg, size_t len, unsigned nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} ctl;
	int fds[4];
	struct iovec iov = { (void *)msg, len };
	struct msghdr m;

	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	for (unsigned i = 0; i < nfds; i++)
		fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nfds > 0) {
		struct cmsghdr *cm;

		memset(&ctl, 0, sizeof(ctl));
		m.msg_control = ctl.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	if (sendmsg(sp[0], &m, MSG_NOSIGNAL) < 0)
		abort(); /* a datagram this small always fits */
	for (unsigned i = 0; i < nfds; i++)
		close(fds[i]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dproto_hdr hdr;
	struct sb_error *err = NULL;
	char *body = NULL;
	int reply_fd = -1, rc;

	if (sp[0] < 0) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
			abort();
		lowest_free = probe_lowest_free();
	}
	/* An empty datagram reads as 0 bytes, which dproto_recv takes for the front's exit. */
	if (size < 2 || size > 65536)
		return 0;
	send_message(data + 1, size - 1, data[0] % 5);
	rc = dproto_recv(sp[1], &hdr, &body, &reply_fd, &err);
	if (rc == 0) {
		if (reply_fd < 0 || data[0] % 5 != 1 || hdr.len != size - 1 - sizeof(hdr) ||
		    hdr.magic != DPROTO_MAGIC || hdr.type == 0 || hdr.type >= DREQ_MAX_ ||
		    memcmp(body, data + 1 + sizeof(hdr), hdr.len) != 0)
			abort();
		close(reply_fd);
		free(body);
	} else {
		sb_error_release(&err);
	}
	/* Whatever came with the message, nothing of it stays open. */
	if (probe_lowest_free() != lowest_free)
		abort();
	return 0;
}
