/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/* TAP output for the compiled guest tests. */
#ifndef VHCA_TAP_H
#define VHCA_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_n, tap_failed;

/* One test: "ok N - what" or "not ok N - what". */
static void __attribute__((format(printf, 2, 3)))
check(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	tap_failed += !cond;
}

/* The plan line; the exit status for main(). */
static int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif /* VHCA_TAP_H */
