/* A stencil modelled on mgrid's `resid` (Buck & Hollingsworth, Fig. 5): the residual
 * R = V - A * U over an N x N x N grid, with U, V and R global arrays and the coefficients A
 * in a heap-allocated structure.
 *
 *   resid [N] [SWEEPS] [TILE]
 *
 * TILE = 0 (the default) runs the original loop nest; TILE > 0 tiles the I2 loop in blocks of
 * TILE rows, so the three planes of U a point needs stay cached between neighbouring rows.
 * Compiled by the tests with `cc -g -O1 -no-pie`.
 */
#include <stdio.h>
#include <stdlib.h>

#define NMAX 96
#define IDX(i1, i2, i3) (((i3) * n + (i2)) * n + (i1))
/* The arrays are padded by 3 lines of 32 bytes so that U, V and R do not all start in the
 * same cache set (without padding each is 96^3 * 8 bytes, a multiple of every way size). */
#define LEN (NMAX * NMAX * NMAX + 12)

double U[LEN];
double V[LEN];
double R[LEN];

struct coeffs {
    double a[4];
    long calls;
};

static int n;

static void resid(const struct coeffs *c, int i2lo, int i2hi) {
    for (int i3 = 1; i3 < n - 1; i3++)
        for (int i2 = i2lo; i2 < i2hi; i2++)
            for (int i1 = 1; i1 < n - 1; i1++)
                R[IDX(i1, i2, i3)] = V[IDX(i1, i2, i3)]
                    - c->a[0] * (U[IDX(i1, i2, i3)])
                    - c->a[1] * (U[IDX(i1 - 1, i2, i3)] + U[IDX(i1 + 1, i2, i3)]
                               + U[IDX(i1, i2 - 1, i3)] + U[IDX(i1, i2 + 1, i3)]
                               + U[IDX(i1, i2, i3 - 1)] + U[IDX(i1, i2, i3 + 1)])
                    - c->a[2] * (U[IDX(i1 - 1, i2 - 1, i3)] + U[IDX(i1 + 1, i2 - 1, i3)]
                               + U[IDX(i1 - 1, i2 + 1, i3)] + U[IDX(i1 + 1, i2 + 1, i3)]
                               + U[IDX(i1, i2 - 1, i3 - 1)] + U[IDX(i1, i2 + 1, i3 - 1)]
                               + U[IDX(i1, i2 - 1, i3 + 1)] + U[IDX(i1, i2 + 1, i3 + 1)]
                               + U[IDX(i1 - 1, i2, i3 - 1)] + U[IDX(i1 - 1, i2, i3 + 1)]
                               + U[IDX(i1 + 1, i2, i3 - 1)] + U[IDX(i1 + 1, i2, i3 + 1)])
                    - c->a[3] * (U[IDX(i1 - 1, i2 - 1, i3 - 1)] + U[IDX(i1 + 1, i2 - 1, i3 - 1)]
                               + U[IDX(i1 - 1, i2 + 1, i3 - 1)] + U[IDX(i1 + 1, i2 + 1, i3 - 1)]
                               + U[IDX(i1 - 1, i2 - 1, i3 + 1)] + U[IDX(i1 + 1, i2 - 1, i3 + 1)]
                               + U[IDX(i1 - 1, i2 + 1, i3 + 1)] + U[IDX(i1 + 1, i2 + 1, i3 + 1)]);
}

static struct coeffs *make_coeffs(void) {
    struct coeffs *c = malloc(sizeof *c);
    if (!c) abort();
    c->a[0] = -8.0 / 3.0;
    c->a[1] = 0.0;
    c->a[2] = 1.0 / 6.0;
    c->a[3] = 1.0 / 12.0;
    c->calls = 0;
    return c;
}

int main(int argc, char **argv) {
    n = argc > 1 ? atoi(argv[1]) : 32;
    int sweeps = argc > 2 ? atoi(argv[2]) : 1;
    int tile = argc > 3 ? atoi(argv[3]) : 0;
    if (n < 3 || n > NMAX || sweeps < 1 || tile < 0) {
        fprintf(stderr, "usage: resid [N 3..%d] [SWEEPS >= 1] [TILE >= 0]\n", NMAX);
        return 2;
    }
    struct coeffs *c = make_coeffs();
    for (int i = 0; i < n * n * n; i++) {
        U[i] = (double)(i % 7);
        V[i] = (double)(i % 5);
    }
    for (int s = 0; s < sweeps; s++) {
        if (tile == 0) {
            resid(c, 1, n - 1);
        } else {
            for (int i2 = 1; i2 < n - 1; i2 += tile)
                resid(c, i2, i2 + tile < n - 1 ? i2 + tile : n - 1);
        }
        c->calls++;
    }
    double sum = 0;
    for (int i = 0; i < n * n * n; i++) sum += R[i];
    printf("%d sweeps, N = %d, tile = %d: sum(R) = %.6f\n", sweeps, n, tile, sum);
    free(c);
    return 0;
}
