/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto.c: requests from the fronts to the helper, and replies.
 *
 * A request is one SOCK_SEQPACKET message: a fixed header (magic, type, length) followed by
 * a body of at most DPROTO_BODY_MAX bytes (the typed request: request.c:dreq_encode), and
 * carrying one descriptor (SCM_RIGHTS): the helper's end of a fresh socketpair on which the
 * reply is written. So many front threads can wait at once without sharing a reply stream,
 * and a worker the helper forks answers on its own descriptor. The helper checks every
 * header field; a malformed message means the front is not behaving, and the helper treats
 * that as fatal (fail closed). The body's fields are checked by request.c:dreq_decode.
 * Replies are JSON: the helper writes them as the client reads them.
 */
#include "config.h"

#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "sb/json.h"
#include "sb/mem.h"

#include "daemon.h"

const char *
dreq_name(enum dreq_type t)
{
	switch (t) {
	case DREQ_BASH:
		return "bash";
	case DREQ_BENCHER:
		return "bencher";
	case DREQ_DIFF:
		return "diff";
	case DREQ_FILES:
		return "files";
	case DREQ_DIALOG:
		return "dialog";
	case DREQ_RESULT:
		return "result";
	case DREQ_FINAL_DIFF:
		return "final_diff";
	case DREQ_PREPARE_GRADING:
		return "prepare_grading";
	case DREQ_AGENT_EXITED:
		return "agent_exited";
	case DREQ_REFERENCE_PATCH:
		return "reference_patch";
	case DREQ_MAX_:
		break;
	}
	return "?";
}

static int
read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOTSOCK)
			n = write(fd, p, len);
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
dproto_call(int channel, enum dreq_type type, const char *body, size_t len,
    unsigned *ret_status, char **ret_body, size_t *ret_len, struct sb_error **err)
{
	struct dproto_hdr hdr = { DPROTO_MAGIC, (uint32_t)type, (uint32_t)len, 0 };
	struct dproto_reply_hdr rh;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov[2] = { { &hdr, sizeof(hdr) }, { (void *)body, len } };
	struct msghdr msg;
	struct cmsghdr *cm;
	_cleanup_close_ int mine = -1, theirs = -1;
	int sp[2];
	char *out;

	if (len > DPROTO_BODY_MAX)
		return sb_error_set(err, EMSGSIZE, "request body larger than %d bytes",
		    DPROTO_BODY_MAX);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return sb_error_errno(err, errno, "socketpair");
	mine = sp[0];
	theirs = sp[1];
	memset(&msg, 0, sizeof(msg));
	memset(&ctl, 0, sizeof(ctl));
	msg.msg_iov = iov;
	msg.msg_iovlen = 2;
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &theirs, sizeof(int));
	if (SB_RETRY_EINTR(sendmsg(channel, &msg, MSG_NOSIGNAL)) < 0)
		return sb_error_errno(err, errno, "send to the helper");
	/* Only the helper (or its worker) may hold the other end now: EOF means no reply. */
	theirs = sb_close(theirs);
	if (read_full(mine, &rh, sizeof(rh)) < 0)
		return sb_error_set(err, EPIPE, "the helper closed the request without a reply");
	if (rh.len > DPROTO_REPLY_MAX || rh.status < 100 || rh.status > 599)
		return sb_error_set(err, EPROTO, "malformed reply from the helper");
	out = sb_xmalloc((size_t)rh.len + 1);
	if (read_full(mine, out, (size_t)rh.len) < 0) {
		free(out);
		return sb_error_set(err, EPIPE, "short reply from the helper");
	}
	out[rh.len] = '\0';
	*ret_status = rh.status;
	*ret_body = out;
	*ret_len = (size_t)rh.len;
	return 0;
}

int
dproto_recv(int channel, struct dproto_hdr *ret_hdr, char **ret_body, int *ret_reply_fd,
    struct sb_error **err)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} ctl;
	/* One byte more than the largest valid message: a longer one is detected, not cut. */
	size_t cap = sizeof(struct dproto_hdr) + DPROTO_BODY_MAX + 1;
	_cleanup_free_ char *buf = sb_xmalloc(cap);
	struct iovec iov = { buf, cap };
	struct dproto_hdr hdr;
	struct msghdr msg;
	struct cmsghdr *cm;
	int fd = -1, nfds = 0;
	ssize_t n;

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	n = SB_RETRY_EINTR(recvmsg(channel, &msg, MSG_CMSG_CLOEXEC));
	if (n == 0)
		return 1;
	if (n < 0)
		return sb_error_errno(err, errno, "recvmsg");
	for (cm = CMSG_FIRSTHDR(&msg); cm != NULL; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int got;

			memcpy(&got, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (nfds++ == 0)
				fd = got;
			else
				close(got);
		}
	}
	if (nfds != 1 || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    (size_t)n < sizeof(hdr)) {
		if (fd >= 0)
			close(fd);
		return sb_error_set(err, EPROTO, "malformed message (%zd bytes, %d descriptors)", n,
		    nfds);
	}
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.magic != DPROTO_MAGIC || hdr.type == 0 || hdr.type >= DREQ_MAX_ ||
	    hdr.len > DPROTO_BODY_MAX || (size_t)n != sizeof(hdr) + hdr.len || hdr.pad != 0) {
		close(fd);
		return sb_error_set(err, EPROTO, "malformed message header");
	}
	*ret_hdr = hdr;
	*ret_body = sb_xmemdup(buf + sizeof(hdr), hdr.len);
	*ret_reply_fd = fd;
	return 0;
}

int
dproto_reply_raw(int fd, unsigned status, const char *body, size_t len)
{
	struct dproto_reply_hdr rh = { status, 0, len };

	if (write_full(fd, &rh, sizeof(rh)) < 0 || write_full(fd, body, len) < 0)
		return -1;
	return 0;
}

int
dproto_reply(int fd, unsigned status, const json_t *body)
{
	_cleanup_free_ char *s = sb_json_dumps(body, JSON_COMPACT);

	return dproto_reply_raw(fd, status, s, strlen(s));
}

int
dproto_reply_error(int fd, unsigned status, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	json_auto_t *j = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = sb_xvasprintf(fmt, ap);
	va_end(ap);
	j = json_pack("{s:o}", "error", sb_json_string_or_null(msg));
	return dproto_reply(fd, status, j);
}
