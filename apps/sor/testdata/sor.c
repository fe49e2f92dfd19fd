/*
 * The sequential kernel of apps/sor in C: the baseline for the Go kernel's speed (docs/SOR.md)
 * and a cross-check of its bits (TestCKernelSameBits). The same grid, borders, omega, stopdiff,
 * colour order and update formula as issue 12; the product omega*(gNew-g) is rounded before the
 * addition (compile with -ffp-contract=off, which also keeps gcc from fusing on FMA targets).
 *
 *   gcc -O2 -ffp-contract=off -o sor-c apps/sor/testdata/sor.c -lm
 *   ./sor-c N [ITERS] [wavefront]   ITERS 0 or absent: until convergence
 *
 * With "wavefront" an iteration makes one pass over the rows, colour 1 of row i-1 right after
 * colour 0 of row i (the order apps/sor uses; the same bits, half the memory traffic);
 * without, it sweeps the whole grid once per colour.
 *
 * Prints one line: sor-c n=N iters=K change=%.17g checksum=%.17g seconds=S mcups=M
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* sweep updates colour c of rows from..to of g (width w = n+2) and returns the largest change. */
static double sweep(double *restrict g, int n, int from, int to, int c, double omega) {
	int w = n + 2;
	double maxd = 0;
	for (int i = from; i <= to; i++) {
		double *up = g + (size_t)(i - 1) * w, *row = g + (size_t)i * w, *dn = g + (size_t)(i + 1) * w;
		for (int j = 1 + ((i + c) & 1); j < w - 1; j += 2) {
			double old = row[j];
			double gNew = (((up[j] + dn[j]) + row[j - 1]) + row[j + 1]) / 4;
			double d = gNew - old;
			double a = fabs(d);
			if (a > maxd)
				maxd = a;
			double step = omega * d;
			row[j] = old + step;
		}
	}
	return maxd;
}

static double maxf(double a, double b) { return a > b ? a : b; }

/* iterate does one iteration and returns its change: two sweeps, or one wavefront pass. */
static double iterate(double *g, int n, double omega, int wavefront) {
	if (!wavefront) { /* two statements: C leaves the order of a call's arguments open */
		double d0 = sweep(g, n, 1, n, 0, omega);
		return maxf(d0, sweep(g, n, 1, n, 1, omega));
	}
	double d = 0;
	for (int i = 1; i <= n; i++) {
		double d0 = sweep(g, n, i, i, 0, omega);
		d = maxf(d, d0);
		if (i > 1) {
			double d1 = sweep(g, n, i - 1, i - 1, 1, omega);
			d = maxf(d, d1);
		}
	}
	return maxf(d, sweep(g, n, n, n, 1, omega));
}

int main(int argc, char **argv) {
	if (argc < 2 || argc > 4 || (argc == 4 && strcmp(argv[3], "wavefront") != 0)) {
		fprintf(stderr, "usage: sor-c N [ITERS] [wavefront]\n");
		return 2;
	}
	int n = atoi(argv[1]), maxIters = argc > 2 ? atoi(argv[2]) : 0, wavefront = argc == 4;
	if (n < 1 || maxIters < 0) {
		fprintf(stderr, "sor-c: N must be at least 1, ITERS at least 0\n");
		return 2;
	}
	int w = n + 2;
	double *g = calloc((size_t)w * w, sizeof *g);
	if (!g) {
		perror("sor-c");
		return 1;
	}
	for (int j = 0; j < w; j++) {
		g[j] = 4.56;
		g[(size_t)(n + 1) * w + j] = 9.85;
	}
	for (int i = 1; i <= n; i++) {
		g[(size_t)i * w] = 7.32;
		g[(size_t)i * w + n + 1] = 6.88;
	}
	double cs = cos(M_PI / (n + 2));
	double r = (cs + cs) / 2;
	double rr = r * r;
	double wopt = 2 / (1 + sqrt(1 - rr));
	double omega = 0.8 * wopt, stopdiff = 0.00001 / (2 - wopt);

	double t0 = now(), change = 0;
	int iters = 0;
	for (;;) {
		change = iterate(g, n, omega, wavefront);
		iters++;
		if (change <= stopdiff || iters == maxIters)
			break;
	}
	double secs = now() - t0;
	double sum = 0;
	for (int i = 1; i <= n; i++)
		for (int j = 1; j <= n; j++)
			sum += g[(size_t)i * w + j];
	printf("sor-c n=%d iters=%d change=%.17g checksum=%.17g seconds=%.6f mcups=%.3f\n", n, iters, change,
	       sum, secs, (double)n * n * iters / secs / 1e6);
	free(g);
	return 0;
}
