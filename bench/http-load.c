/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http-load.c: a small HTTP load generator for the daemon benchmarks.
 *
 *   http-load (--unix PATH | --tcp HOST:PORT) [--token T] [--path /project]
 *             [--concurrency 64] [--seconds 5]
 *
 * Each of N threads opens a connection, sends one GET with "Connection: close", reads the
 * whole reply and records the latency, again and again for the given time. Prints
 * requests/s, p50, p99 and max latency, and the count of non-200 replies.
 */
#include "config.h"

#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include "sb/common.h"

#define SAMPLES_MAX 4000000

static const char *arg_unix, *arg_tcp, *arg_token, *arg_path = "/project";
static unsigned arg_conc = 64, arg_secs = 5;
static double *samples;
static size_t nsamples;
static unsigned long errors;
/* Why a request failed: no connection, the request not written, no reply (the server closed
 * it unanswered, as libmicrohttpd does past a connection limit), a reply other than 200. */
static unsigned long err_connect, err_write, err_noreply, err_status;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double deadline;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
connect_target(void)
{
	int fd;

	if (arg_unix != NULL) {
		struct sockaddr_un sa;

		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		memset(&sa, 0, sizeof(sa));
		sa.sun_family = AF_UNIX;
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", arg_unix);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			return sb_close(fd);
	} else {
		struct sockaddr_in sa;
		char host[64];
		const char *colon = strrchr(arg_tcp, ':');

		if (colon == NULL)
			return -1;
		snprintf(host, sizeof(host), "%.*s", (int)(colon - arg_tcp), arg_tcp);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		memset(&sa, 0, sizeof(sa));
		sa.sin_family = AF_INET;
		sa.sin_port = htons((uint16_t)strtoul(colon + 1, NULL, 10));
		inet_pton(AF_INET, host, &sa.sin_addr);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			return sb_close(fd);
	}
	return fd;
}

static void *
worker(void *unused)
{
	char req[512], buf[65536];
	int n;

	(void)unused;
	n = snprintf(req, sizeof(req),
	    "GET %s HTTP/1.1\r\nHost: d\r\nConnection: close\r\n%s%s%s\r\n", arg_path,
	    arg_token ? "Authorization: Bearer " : "", arg_token ? arg_token : "",
	    arg_token ? "\r\n" : "");
	while (now() < deadline) {
		double t0 = now();
		int fd = connect_target();
		bool ok = false;
		size_t got = 0;
		ssize_t r;

		unsigned long *why = NULL;

		if (fd < 0) {
			why = &err_connect;
		} else if (write(fd, req, (size_t)n) != n) {
			why = &err_write;
		} else {
			while ((r = read(fd, buf + (got < 64 ? got : 64), sizeof(buf) - 64)) > 0)
				got += (size_t)r;
			ok = got > 12 && memcmp(buf, "HTTP/1.1 200", 12) == 0;
			if (!ok)
				why = got == 0 ? &err_noreply : &err_status;
		}
		sb_close(fd);
		pthread_mutex_lock(&lock);
		if (!ok) {
			errors++;
			(*why)++;
		}
		else if (nsamples < SAMPLES_MAX)
			samples[nsamples++] = now() - t0;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = { { "unix", 1, NULL, 'u' }, { "tcp", 1, NULL, 't' },
		{ "token", 1, NULL, 'k' }, { "path", 1, NULL, 'p' }, { "concurrency", 1, NULL, 'c' },
		{ "seconds", 1, NULL, 's' }, { NULL, 0, NULL, 0 } };
	pthread_t th[1024];
	double start;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'u': arg_unix = optarg; break;
		case 't': arg_tcp = optarg; break;
		case 'k': arg_token = optarg; break;
		case 'p': arg_path = optarg; break;
		case 'c': arg_conc = (unsigned)strtoul(optarg, NULL, 10); break;
		case 's': arg_secs = (unsigned)strtoul(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	if ((arg_unix == NULL) == (arg_tcp == NULL) || arg_conc == 0 || arg_conc > 1024) {
		fprintf(stderr, "usage: http-load (--unix PATH | --tcp HOST:PORT) [--token T] "
				"[--path P] [--concurrency N] [--seconds S]\n");
		return 2;
	}
	samples = calloc(SAMPLES_MAX, sizeof(double));
	start = now();
	deadline = start + arg_secs;
	for (unsigned i = 0; i < arg_conc; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (unsigned i = 0; i < arg_conc; i++)
		pthread_join(th[i], NULL);
	qsort(samples, nsamples, sizeof(double), cmp);
	printf("requests %zu  errors %lu  rate %.0f req/s  p50 %.2f ms  p99 %.2f ms  max %.2f ms\n",
	    nsamples, errors, (double)nsamples / (now() - start),
	    nsamples ? samples[nsamples / 2] * 1e3 : 0, nsamples ? samples[nsamples * 99 / 100] * 1e3 : 0,
	    nsamples ? samples[nsamples - 1] * 1e3 : 0);
	if (errors > 0)
		printf("errors: %lu no connection, %lu not written, %lu closed unanswered, %lu not 200\n",
		    err_connect, err_write, err_noreply, err_status);
	return 0;
}
