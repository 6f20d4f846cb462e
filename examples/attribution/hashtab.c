/* A chained hash table: a global bucket array and heap-allocated nodes from two allocation
 * sites (keys and nodes), then lookups in random order. A second real program for the
 * attribution accuracy table. Compiled with `cc -g -O1 -no-pie` (or as a PIE).
 *
 *   hashtab [KEYS] [LOOKUPS] [MODE]
 *
 * MODE 0 (the default) allocates each key and node with its own malloc and formats each
 * looked-up key with snprintf. MODE 1 carves keys and nodes from pools of POOL objects and
 * looks up keys kept in a heap array of pointers, so the lookups are mostly misses and the
 * allocations few: long traces with many misses for the sampled-accuracy table (recording
 * unwinds each allocation's call path, which costs ~26,000 references under Valgrind).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS 16384
#define POOL 4096

struct node {
    struct node *next;
    unsigned long hash;
    char *key;
    long value;
};

struct node *table[NBUCKETS];
long counts[64];
static int pooled;

/* The next `size` bytes of a pool of POOL objects, allocating a new pool when it is used up. */
static void *pool_take(char **next, char **end, size_t size) {
    if (*next == *end) {
        *next = malloc(POOL * size);
        if (!*next) abort();
        *end = *next + POOL * size;
    }
    void *p = *next;
    *next += size;
    return p;
}

static unsigned long hash_of(const char *s) {
    unsigned long h = 1469598103934665603UL;
    while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211UL;
    return h;
}

static char *make_key(unsigned long i) {
    static char *next, *end;
    char *k = pooled ? pool_take(&next, &end, 24) : malloc(24);
    if (!k) abort();
    snprintf(k, 24, "key-%lu", i * 2654435761UL % 1000003UL);
    return k;
}

static struct node *make_node(char *key, long value) {
    static char *next, *end;
    struct node *n = pooled ? pool_take(&next, &end, sizeof *n) : malloc(sizeof *n);
    if (!n) abort();
    n->key = key;
    n->hash = hash_of(key);
    n->value = value;
    return n;
}

static void insert(struct node *n) {
    struct node **b = &table[n->hash % NBUCKETS];
    n->next = *b;
    *b = n;
}

static long lookup(const char *key) {
    unsigned long h = hash_of(key);
    for (struct node *n = table[h % NBUCKETS]; n; n = n->next)
        if (n->hash == h && strcmp(n->key, key) == 0) return n->value;
    return -1;
}

int main(int argc, char **argv) {
    unsigned long keys = argc > 1 ? strtoul(argv[1], 0, 10) : 20000;
    unsigned long lookups = argc > 2 ? strtoul(argv[2], 0, 10) : 100000;
    pooled = argc > 3 && atoi(argv[3]) == 1;
    char **all = malloc((keys + 1) * sizeof *all);
    if (!all) abort();
    for (unsigned long i = 0; i < keys; i++) insert(make_node(all[i] = make_key(i), (long)i));
    all[keys] = "absent";
    unsigned long x = 12345;
    long found = 0;
    char buf[24];
    for (unsigned long i = 0; i < lookups; i++) {
        x = x * 6364136223846793005UL + 1442695040888963407UL;
        unsigned long k = (x >> 33) % (keys + keys / 4);
        const char *key = buf;
        if (pooled)
            key = all[k < keys ? k : keys];
        else
            snprintf(buf, sizeof buf, "key-%lu", k * 2654435761UL % 1000003UL);
        long v = lookup(key);
        counts[(unsigned long)(v + 1) % 64]++;
        found += v >= 0;
    }
    printf("%lu keys, %lu lookups, %ld found\n", keys, lookups, found);
    free(all);
    return 0;
}
