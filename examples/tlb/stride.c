/* Strides over 256 MiB one 4 KiB page at a time: a first pass writes a byte of every page,
 * three more read it. With 4 KiB pages every visit is to another page, and when a page comes
 * back the 1536-entry STLB has long dropped it among the 65536: a page walk at nearly every
 * visit. With 2 MiB pages the buffer is 128 pages, which the STLB holds: only the first visit
 * of each walks (crates/cachescope-cli/tests/tlb.rs; docs/tlb.md).
 *
 * "madvise" asks the kernel for transparent huge pages on the buffer (MADV_HUGEPAGE, which
 * Valgrind passes on), so a system with THP "madvise" or "always" backs it by 2 MiB pages
 * that /proc/PID/smaps counts as AnonHugePages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define BYTES (256UL << 20)
#define PAGE 4096UL
#define HUGE (2UL << 20)
#define READS 3

int main(int argc, char **argv) {
    char *buf;
    if (posix_memalign((void **)&buf, HUGE, BYTES) != 0)
        return 1;
    if (argc > 1 && strcmp(argv[1], "madvise") == 0)
        madvise(buf, BYTES, MADV_HUGEPAGE);
    for (unsigned long i = 0; i < BYTES; i += PAGE)
        buf[i] = (char)(i >> 12);
    unsigned long sum = 0;
    for (int pass = 0; pass < READS; pass++)
        for (unsigned long i = 0; i < BYTES; i += PAGE)
            sum += (unsigned char)buf[i];
    printf("%lu\n", sum);
    /* Not freed: the buffer is still mapped at exit, when the recorder reads smaps. */
    return 0;
}
