/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replay.c: main() for a fuzz target built without libFuzzer: runs the target once on
 * each file named on the command line (directories are walked one level), so the saved
 * corpus, crashers included, is replayed by `make check`.
 */
#include "config.h"

#ifndef SB_FUZZING_ENGINE

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/buf.h"

#include "fuzz.h"

static int
replay_file(const char *path)
{
	struct sb_buf b = SB_BUF_INIT(16 * 1024 * 1024);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || sb_buf_read_fd(&b, fd, NULL) < 0) {
		fprintf(stderr, "replay: cannot read '%s'\n", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	/* A copy of exactly the input's size, so ASan sees any read past the end. */
	{
		uint8_t *copy = malloc(b.len ? b.len : 1);

		memcpy(copy, b.s, b.len);
		LLVMFuzzerTestOneInput(copy, b.len);
		free(copy);
	}
	sb_buf_release(&b);
	return 0;
}

int
main(int argc, char **argv)
{
	size_t n = 0;
	int bad = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "replay: no '%s'\n", argv[i]);
			bad++;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			DIR *d = opendir(argv[i]);
			struct dirent *de;

			while (d != NULL && (de = readdir(d)) != NULL) {
				char path[4096];

				if (de->d_name[0] == '.')
					continue;
				snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
				bad += replay_file(path) < 0;
				n++;
			}
			if (d != NULL)
				closedir(d);
		} else {
			bad += replay_file(argv[i]) < 0;
			n++;
		}
	}
	printf("replayed %zu inputs\n", n);
	return bad == 0 && n > 0 ? 0 : 1;
}

#endif
