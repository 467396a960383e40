/* alloc_count.c - an LD_PRELOAD shim that counts malloc, calloc and realloc
 * calls of a process (every thread, every library) into the first 8 bytes
 * of the file $RC_ALLOC_COUNT_FILE, mapped shared, so another process can
 * read the count while this one runs (tests/bench/delta_allocs.js).
 *
 *   cc -shared -fPIC -O2 -o alloc_count.so alloc_count.c
 *   RC_ALLOC_COUNT_FILE=/tmp/n LD_PRELOAD=./alloc_count.so prog
 *
 * glibc lets a program replace malloc: its own calls come here too, and
 * __libc_malloc and friends are the real allocator underneath. Nothing
 * is counted before the file is mapped (the start of the process). */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static volatile uint64_t *count;

__attribute__((constructor)) static void map_count(void)
{
    const char *path = getenv("RC_ALLOC_COUNT_FILE");
    if (!path)
        return;
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    if (fd < 0)
        return;
    if (ftruncate(fd, 8) == 0) {
        void *p = mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED)
            count = p;
    }
    close(fd);
}

static void counted(void)
{
    if (count)
        __atomic_fetch_add(count, 1, __ATOMIC_RELAXED);
}

void *malloc(size_t n)
{
    counted();
    return __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
    counted();
    return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
    counted();
    return __libc_realloc(p, n);
}
