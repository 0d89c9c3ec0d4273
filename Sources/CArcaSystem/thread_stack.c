#include "CArcaSystem.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The part just below the caller's frame, which madvise below must leave alone
 * (its own call runs there): zeroed in place. noinline, so the array lies below
 * arca_clear_used_stack's frame, and far less than any thread stack arcad starts. */
__attribute__((noinline)) static void zero_just_below(void) {
    unsigned char below[ARCA_STACK_KEEP_BYTES * 2];
    explicit_bzero(below, sizeof below);
    __asm__ __volatile__("" : : "r"(below) : "memory");
}

int arca_thread_stack(uintptr_t *low, size_t *size) {
    pthread_attr_t attributes;
    int rc = pthread_getattr_np(pthread_self(), &attributes);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    void *address = NULL;
    rc = pthread_attr_getstack(&attributes, &address, size);
    pthread_attr_destroy(&attributes);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    *low = (uintptr_t)address;
    return 0;
}

int arca_clear_used_stack(void) {
    zero_just_below();
    uintptr_t low = 0;
    size_t size = 0;
    if (arca_thread_stack(&low, &size) != 0) return -1;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    uintptr_t start = (low + page - 1) & ~(page - 1);
    if (here < start + ARCA_STACK_KEEP_BYTES) return 0;
    uintptr_t end = (here - ARCA_STACK_KEEP_BYTES) & ~(page - 1);
    if (end <= start) return 0;
    /* As glibc does for a finished thread's stack: the pages go back to the kernel
     * and read as zeros when next touched. */
    return madvise((void *)start, end - start, MADV_DONTNEED);
}
