// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The guest's memcpy bandwidth: the ceiling any local copy engine meets.
 * Prints "memcpy_MBps <value>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(void)
{
	const size_t len = 64UL << 20;
	const int rounds = 8;
	struct timespec a, b;
	char *src = malloc(len), *dst = malloc(len);
	double s;
	int i;

	if (!src || !dst)
		return 1;
	memset(src, 1, len);
	memset(dst, 2, len);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < rounds; i++) {
		src[i] = (char)i;
		memcpy(dst, src, len);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	printf("memcpy_MBps %.0f\n", (double)len * rounds / s / 1e6 + dst[len - 1] * 0);
	free(src);
	free(dst);
	return 0;
}
