/* The force computation of apps/barneshut in C: a baseline for its speed (docs/BARNESHUT.md).
 * It reads an atos file (barneshut -steps 0 -out FILE writes one), then REPS times builds the
 * same Morton-ordered octree and walks it for every body with the same opening criterion,
 * the same order and the same arithmetic, and prints one line:
 *   bh-c bodies=N interactions=I accsum=S seconds=T ips=R
 * accsum adds ax, ay, az of every body in body order; with gcc -O2 -ffp-contract=off it
 * equals, bit for bit, what the Go code computes (TestCBaselineSameBits).
 *   gcc -O2 -ffp-contract=off -o bh-c bh.c -lm && ./bh-c FILE [THETA LEAF EPS REPS] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BITS 21

typedef struct {
	double cx, cy, cz, mass, lx, ly, lz, size;
	int32_t first, count, kids, nkids;
} cell;

static int n, leaf;
static double *px, *py, *pz, *pm;  /* body order */
static double *X, *Y, *Z, *M;      /* Morton order */
static uint64_t *key, *skey;
static int32_t *ord;
static cell *cells;
static int ncells, capcells;
static double theta2, eps2;

static uint64_t spread(uint64_t v) {
	v &= 0x1fffff;
	v = (v | v << 32) & 0x1f00000000ffffULL;
	v = (v | v << 16) & 0x1f0000ff0000ffULL;
	v = (v | v << 8) & 0x100f00f00f00f00fULL;
	v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
	v = (v | v << 2) & 0x1249249249249249ULL;
	return v;
}

static int cmp(const void *a, const void *b) {
	int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
	if (key[i] != key[j]) return key[i] < key[j] ? -1 : 1;
	return i < j ? -1 : (i > j);
}

static int newcells(int k) {
	if (ncells + k > capcells) {
		capcells = 2 * (ncells + k);
		cells = realloc(cells, sizeof(cell) * capcells);
	}
	ncells += k;
	return ncells - k;
}

static void finish(int c, double m, double x, double y, double z) {
	cells[c].mass = m;
	if (m > 0) { cells[c].cx = x / m; cells[c].cy = y / m; cells[c].cz = z / m; }
}

static void build(int c, int32_t first, int32_t count, int level, double lx, double ly, double lz, double size) {
	cell *cl = &cells[c];
	*cl = (cell){0};
	cl->lx = lx; cl->ly = ly; cl->lz = lz; cl->size = size; cl->first = first; cl->count = count;
	if (count <= leaf || level == BITS) {
		double m = 0, x = 0, y = 0, z = 0;
		for (int32_t j = first; j < first + count; j++) {
			m += M[j]; x += M[j] * X[j]; y += M[j] * Y[j]; z += M[j] * Z[j];
		}
		finish(c, m, x, y, z);
		return;
	}
	unsigned shift = 3 * (BITS - 1 - level);
	int32_t starts[9]; int digits[8]; int nk = 0;
	for (int32_t j = first; j < first + count;) {
		int d = (int)(skey[j] >> shift) & 7;
		int32_t k = j;
		while (k < first + count && ((int)(skey[k] >> shift) & 7) == d) k++;
		starts[nk] = j; digits[nk] = d; nk++;
		j = k;
	}
	starts[nk] = first + count;
	int kids = newcells(nk);
	cells[c].kids = kids; cells[c].nkids = nk;
	double half = size / 2;
	for (int k = 0; k < nk; k++) {
		int d = digits[k];
		build(kids + k, starts[k], starts[k + 1] - starts[k], level + 1,
		      lx + ((d >> 2) & 1 ? half : 0), ly + ((d >> 1) & 1 ? half : 0), lz + (d & 1 ? half : 0), half);
	}
	double m = 0, x = 0, y = 0, z = 0;
	for (int k = 0; k < nk; k++) {
		cell *ch = &cells[kids + k];
		m += ch->mass; x += ch->mass * ch->cx; y += ch->mass * ch->cy; z += ch->mass * ch->cz;
	}
	finish(c, m, x, y, z);
}

static void buildtree(void) {
	double lo[3] = {px[0], py[0], pz[0]}, hi[3] = {px[0], py[0], pz[0]};
	for (int i = 0; i < n; i++) {
		double p[3] = {px[i], py[i], pz[i]};
		for (int d = 0; d < 3; d++) { lo[d] = fmin(lo[d], p[d]); hi[d] = fmax(hi[d], p[d]); }
	}
	double side = fmax(fmax(hi[0] - lo[0], hi[1] - lo[1]), hi[2] - lo[2]);
	if (side == 0) side = 1;
	side *= 1.000000000001;
	double sk = (double)(1ULL << BITS) / side;
	for (int i = 0; i < n; i++) {
		double p[3] = {px[i], py[i], pz[i]};
		uint64_t k = 0;
		for (int d = 0; d < 3; d++) {
			double c = fmax(0, fmin((double)((1 << BITS) - 1), floor((p[d] - lo[d]) * sk)));
			k |= spread((uint64_t)c) << (2 - d);
		}
		key[i] = k;
		ord[i] = i;
	}
	qsort(ord, n, sizeof ord[0], cmp);
	for (int j = 0; j < n; j++) {
		int i = ord[j];
		X[j] = px[i]; Y[j] = py[i]; Z[j] = pz[i]; M[j] = pm[i]; skey[j] = key[i];
	}
	ncells = 0;
	newcells(1);
	build(0, 0, n, 0, lo[0], lo[1], lo[2], side);
}

static int32_t *stack;

static long long accel(int j, double *a) {
	double x = X[j], y = Y[j], z = Z[j], ax = 0, ay = 0, az = 0;
	long long n_int = 0;
	int sp = 0;
	stack[sp++] = 0;
	while (sp > 0) {
		cell *c = &cells[stack[--sp]];
		if (c->nkids == 0) {
			for (int32_t k = c->first; k < c->first + c->count; k++) {
				if (k == j) continue;
				double dx = X[k] - x, dy = Y[k] - y, dz = Z[k] - z;
				double r2 = dx * dx + dy * dy + dz * dz + eps2;
				double inv = 1 / sqrt(r2);
				double mi = M[k] * inv;
				double mi3 = mi * inv * inv;
				ax += dx * mi3; ay += dy * mi3; az += dz * mi3;
				n_int++;
			}
			continue;
		}
		double dx = c->cx - x, dy = c->cy - y, dz = c->cz - z;
		double d2 = dx * dx + dy * dy + dz * dz;
		int inside = x >= c->lx && x < c->lx + c->size && y >= c->ly && y < c->ly + c->size &&
		             z >= c->lz && z < c->lz + c->size;
		if (!inside && c->size * c->size < theta2 * d2) {
			double r2 = d2 + eps2;
			double inv = 1 / sqrt(r2);
			double mi = c->mass * inv;
			double mi3 = mi * inv * inv;
			ax += dx * mi3; ay += dy * mi3; az += dz * mi3;
			n_int++;
			continue;
		}
		for (int k = c->nkids - 1; k >= 0; k--) stack[sp++] = c->kids + k;
	}
	a[0] = ax; a[1] = ay; a[2] = az;
	return n_int;
}

int main(int argc, char **argv) {
	if (argc < 2) { fprintf(stderr, "usage: bh-c FILE [THETA LEAF EPS REPS]\n"); return 2; }
	double theta = argc > 2 ? atof(argv[2]) : 0.5, eps = argc > 4 ? atof(argv[4]) : 0.025;
	leaf = argc > 3 ? atoi(argv[3]) : 8;
	int reps = argc > 5 ? atoi(argv[5]) : 1, dim;
	double t;
	theta2 = theta * theta; eps2 = eps * eps;
	FILE *f = fopen(argv[1], "r");
	if (!f || fscanf(f, "%d %d %lf", &n, &dim, &t) != 3 || n < 1 || dim != 3) { fprintf(stderr, "bad file\n"); return 1; }
	px = malloc(8 * n); py = malloc(8 * n); pz = malloc(8 * n); pm = malloc(8 * n);
	X = malloc(8 * n); Y = malloc(8 * n); Z = malloc(8 * n); M = malloc(8 * n);
	key = malloc(8 * n); skey = malloc(8 * n); ord = malloc(4 * n);
	stack = malloc(sizeof(int32_t) * (8 * 8 * BITS + 64));
	for (int i = 0; i < n; i++) if (fscanf(f, "%lf", &pm[i]) != 1) return 1;
	for (int i = 0; i < n; i++) if (fscanf(f, "%lf %lf %lf", &px[i], &py[i], &pz[i]) != 3) return 1;
	fclose(f);
	double *acc = malloc(24 * (size_t)n);
	long long inter = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int r = 0; r < reps; r++) {
		buildtree();
		inter = 0;
		for (int j = 0; j < n; j++) inter += accel(j, &acc[3 * ord[j]]);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
	double sum = 0;
	for (int i = 0; i < n; i++) { sum += acc[3 * i]; sum += acc[3 * i + 1]; sum += acc[3 * i + 2]; }
	printf("bh-c bodies=%d interactions=%lld accsum=%.17g seconds=%.6f ips=%.6g\n", n, inter, sum, secs, (double)inter * reps / secs);
	return 0;
}
