// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The guest's memcpy bandwidth: the ceiling any local copy engine meets.
 * Two sizes: 64 KiB, as perftest's reused message buffers (they stay in
 * cache), and 64 MiB, which does not fit any cache.
 * Prints "memcpy_64KiB_MBps <value>" and "memcpy_64MiB_MBps <value>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double copy_rate(size_t len, size_t total)
{
	char *src = malloc(len), *dst = malloc(len);
	struct timespec a, b;
	size_t done;
	double s;

	if (!src || !dst)
		return 0;
	memset(src, 1, len);
	memset(dst, 2, len);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (done = 0; done < total; done += len) {
		src[done / len % len] = (char)done;
		memcpy(dst, src, len);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	s = (double)total / s / 1e6 + dst[len - 1] * 0;
	free(src);
	free(dst);
	return s;
}

int main(void)
{
	printf("memcpy_64KiB_MBps %.0f\n", copy_rate(64UL << 10, 512UL << 20));
	printf("memcpy_64MiB_MBps %.0f\n", copy_rate(64UL << 20, 512UL << 20));
	return 0;
}
