/* An array of 64-byte structs of which one 8-byte field is read: each fetched 64-byte line
 * has 8 of its bytes used, a line utilization of 1/8 for the array's bucket
 * (tests/utilization.rs; docs/hardware.md). With "split", the field is kept in an array of
 * its own instead (a structure of arrays), and every byte fetched is used. */
#include <stdio.h>
#include <string.h>

#define N (1 << 15) /* 2 MiB of structs: larger than the caches the test simulates */

struct particle {
    double x, y, z, vx, vy, vz, mass, charge; /* 64 bytes */
};

struct particle particles[N] __attribute__((aligned(64)));
double masses[N] __attribute__((aligned(64)));

int main(int argc, char **argv) {
    int split = argc > 1 && strcmp(argv[1], "split") == 0;
    double total = 0;
    if (split) {
        for (int i = 0; i < N; i++)
            total += masses[i];
    } else {
        for (int i = 0; i < N; i++)
            total += particles[i].mass;
    }
    printf("%g\n", total);
    return 0;
}
